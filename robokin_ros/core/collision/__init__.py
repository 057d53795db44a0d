"""Collision checking for the servo, on coal through Pinocchio: the scene of objects and its changes (`scene`,
`scene_change`), shapes (`geometry`), clearances between the arm and the scene (`clearance`) and the speed scaling
they give (`scaling`)."""

# what other rooms of core/ may import (test_layering)
SURFACE_MODULES = ("clearance", "geometry", "scaling", "scene", "scene_change")
