"""What an arm can do at a configuration: velocity, acceleration and force ellipsoids, manipulability
measures, directional capability and the force polytope (`analysis`, `directional`, `polytope`, `report`)."""

# what other rooms of core/ may import (test_layering)
SURFACE_MODULES = ()
