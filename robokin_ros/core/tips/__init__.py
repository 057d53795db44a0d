"""Several tips on one robot, one room: the math of two hands holding one object (`held_object`): the object frame
fixed in the hands at the grasp, twists carried between points, the relative Jacobian of one hand seen from the
other, and the grasp matrix. On the shared core only; the servo, the path planner and the capability analysis use
it."""

# what other rooms of core/ may import (test_layering)
SURFACE_MODULES = ("held_object",)
