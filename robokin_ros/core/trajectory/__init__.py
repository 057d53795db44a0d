"""Joint trajectories, one room: the sampled arrays a plan hands over and how pieces join (`arrays`), what a
joint_trajectory_controller accepts and how it judges tolerances (`controller_rules`, `controller_tolerances`), the
check before robokin sends a trajectory (`outgoing_check`, with the exact peaks of the controller's quintic in
`quintic_peaks`), rest-to-rest profiles (`profiles`), stopping a running trajectory (`stopping`) and deciding
when execution is done (`execution`). On the shared core only; servo, path, program, sim and the nodes use it."""

# what other rooms of core/ may import (test_layering)
SURFACE_MODULES = ("arrays", "controller_rules", "controller_tolerances", "jerk_check", "jerk_smoothing",
                   "outgoing_check", "profiles", "quintic_peaks")
