"""Motion programs (MoveL, MoveJ, MoveC with speeds and zones) and the one planner, `MotionPlanner` in
`planner`, which plans waypoint paths as programs too."""

# what other rooms of core/ may import (test_layering)
SURFACE_MODULES = ()
