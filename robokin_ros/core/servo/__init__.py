"""The servo core: commands (twist, joint jog, pose target, guiding) resolved into velocity IK each tick, the
guards that scale or stop it, and the JointTrajectory windows a controller receives (`servo.Servo`)."""

# what other rooms of core/ may import (test_layering)
SURFACE_MODULES = ()
