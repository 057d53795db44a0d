"""One exception hierarchy for the whole core; the ROS boundary catches `RobokinError` only."""
from __future__ import annotations

from collections.abc import Sequence


class RobokinError(Exception):
    """Base class of every error the core raises on purpose."""


class ModelError(RobokinError):
    """The robot description cannot be loaded or does not fit the request (URDF, chain, tool offset)."""


class UnknownFrameError(RobokinError):
    """A frame name that is not in the model; the message lists the valid names."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        self.name = name
        self.available = tuple(sorted(available))
        super().__init__(f"frame '{name}' is not in the model; available frames: {list(self.available)}")


class UnknownJointError(RobokinError):
    """A joint name that is not in the model; the message lists the valid names."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        self.name = name
        self.available = tuple(available)
        super().__init__(f"joint '{name}' is not in the model; available joints: {list(self.available)}")


class InvalidInputError(RobokinError):
    """A numeric input with the wrong size or a NaN/inf entry."""


class ConfigError(RobokinError):
    """Configuration values that break their documented bounds; lists every problem at once."""

    def __init__(self, problems: Sequence[str], what: str = "configuration") -> None:
        self.problems = tuple(problems)
        super().__init__(f"invalid {what}:\n  " + "\n  ".join(self.problems))


# ---- Cartesian path IK (core/path) ---------------------------------------------------------------------
class PathInputError(InvalidInputError):
    """A path request that cannot be planned as given (bad waypoint, empty path, blend radius too large).

    `waypoint` is the index of the offending waypoint (0 = first waypoint after the start), or -1.
    """

    def __init__(self, message: str, waypoint: int = -1) -> None:
        self.waypoint = waypoint
        super().__init__(message)


class EmptyPathError(PathInputError):
    """No waypoints, or every waypoint equals the start pose: there is no motion to plan."""


class BlendRadiusError(PathInputError):
    """A blend radius larger than half the shorter segment next to its corner (with clamping off)."""

    def __init__(self, corner: int, radius: float, limit: float) -> None:
        self.corner, self.radius, self.limit = corner, radius, limit
        super().__init__(f"blend radius {radius * 1e3:.3f} mm at waypoint {corner} exceeds half the shorter "
                         f"neighbouring segment ({limit * 1e3:.3f} mm); use a radius <= {limit * 1e3:.3f} mm "
                         "or enable blend radius clamping", corner)


class TrajectoryTimingError(RobokinError):
    """Time parameterization failed or its verification found a limit violation it could not fix."""
