"""The classroom toolbox: homogeneous transforms, DH robots, workspace maps, calibration, wrench mapping and motion
profiles, on the same core as the servo and path IK (a DH arm becomes a RobotModel). The closed-form IK it teaches
with lives in `core/ik/`, where the planner uses it too."""

# what other rooms of core/ may import (test_layering)
SURFACE_MODULES = ()
