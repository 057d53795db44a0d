"""Pose IK, one room: the iterative solver from a seed (`pose_ik`), the closed forms listing every branch (UR:
`ur`, OPW arms: `opw` with the shipped parameter sets in `opw_arms`, the planar 2R arm: `planar_2r`, their shared
solution records: `solutions`) and the choice of the branch nearest the current state (`branch_choice`).
On the shared core only; the planner, the CLI, the studio and the classroom use it."""

# what other rooms of core/ may import (test_layering)
SURFACE_MODULES = ("branch_choice", "opw", "planar_2r", "pose_ik", "solutions", "ur")
