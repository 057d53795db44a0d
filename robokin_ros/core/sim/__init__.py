"""The simulated arm behind sim_robot: joints that follow a joint_trajectory_controller's splines, and its
config."""

# what other rooms of core/ may import (test_layering)
SURFACE_MODULES = ()
