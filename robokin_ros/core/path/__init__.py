"""The Cartesian path library: dense geometry, the dense IK solve, timing and verification of a run. Motion
programs and the classroom use it through `surface`, its one declared module."""

# what other rooms of core/ may import (test_layering)
SURFACE_MODULES = ("surface",)
