"""capability_node: joint states in, capability markers out (ellipsoids, force polytope, manipulability).

Interfaces:
    joint_topic        sensor_msgs/JointState in (default /joint_states; reordered by name, extras ignored)
    ~/markers          visualization_msgs/MarkerArray out at `rate`, in the base frame; a robot with several tips
                       gets every item once per tip (ns `<tip>/<item>`) and, with `held_object`, for the object
                       held by all tips (ns `held_object/<item>`); a single-tip robot's ns is the item
    ~/export_polytope  std_srvs/Trigger: writes the current force polytope (the first tip's) to `stl_path`
                       (binary STL, [N])
Parameters: CapabilityConfig (see core/capability/config.py) plus `show` (string array, runtime changeable).
The subscription keeps the newest valid joint state (a joint named twice, a missing joint, NaN, or a stamp older
than the state in use are logged and ignored: core/stamp_order.py); the timer does the work through the core.
"""
from __future__ import annotations

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor, ParameterType, SetParametersResult
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from robokin_ros.core.capability.analysis import CapabilityAnalysis, analyze, torque_limits_of
from robokin_ros.core.capability.config import DEFAULT_SHOW, SHOW_ITEMS, CapabilityConfig, check_show_items
from robokin_ros.core.capability.held_capability import analyze_held_object
from robokin_ros.core.capability.per_tip import analyze_tip
from robokin_ros.core.capability.polytope import ForcePolytope, tool_force_polytope, write_stl
from robokin_ros.core.errors import RobokinError
from robokin_ros.core.stamp_order import StampOrder
from robokin_ros.ros.capability_markers import HELD_OBJECT_NAMESPACE, capability_markers, deleted_markers
from robokin_ros.ros.conversions import concerns_chain, measurement_from_joint_state, time_nanoseconds
from robokin_ros.ros.params import watch_config
from robokin_ros.ros.runtime import LATEST_ONLY, RobokinNode, receive_time, run_node

LOG_PERIOD = 2.0     # [s] a repeated complaint is logged at most this often
LOG_KEY_CHARS = 60   # errors that agree in this many leading characters are throttled as one


class CapabilityNode(RobokinNode):
    """Capability visualization node; see the module docstring for its interfaces."""

    default_name = "capability_node"
    config_class = CapabilityConfig
    log_period = LOG_PERIOD

    def __init__(self, node_name: str | None = None, **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        cfg = self._config
        self._chain_joints = frozenset(self._robot.joint_names)
        self._apply_config(cfg)
        watch_config(self, lambda: self._config, self._apply_config)
        descriptor = ParameterDescriptor(type=ParameterType.PARAMETER_STRING_ARRAY,
                                         description=f"items drawn; any of {list(SHOW_ITEMS)}")
        self._show = check_show_items(self.declare_parameter("show", list(DEFAULT_SHOW), descriptor).value)
        self.add_on_set_parameters_callback(self._check_show)
        self.add_post_set_parameters_callback(self._store_show)
        self._positions: np.ndarray | None = None         # (n,) of the newest valid joint state
        self._stamp_order = StampOrder()
        self.create_subscription(JointState, cfg.joint_topic, self._on_joint_state, LATEST_ONLY)
        self._publisher = self.create_publisher(MarkerArray, "~/markers", LATEST_ONLY)
        self.create_service(Trigger, "~/export_polytope", self._on_export)
        self.create_timer(1.0 / cfg.rate, self._tick)
        self.get_logger().info(f"capability of {self._robot.name} {self._robot.base_frame} -> "
                               f"{self._robot.tip_frame} at {cfg.rate:g} Hz on {self._publisher.topic_name}")

    def _apply_config(self, cfg: CapabilityConfig) -> None:
        cfg.check_joint_lists(self._robot.joint_names)
        torque = torque_limits_of(self._robot, cfg.torque_limits)
        if torque.reason:
            self.get_logger().warning(torque.reason)
        if cfg.held_object and len(self._robot.tip_frames) == 1:
            self.get_logger().warning(f"held_object needs a robot with several tips; {self._robot.name} has one "
                                      f"({self._robot.tip_frame}): no held-object markers")
        self._config, self._torque = cfg, torque

    def _check_show(self, parameters) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name == "show":
                try:
                    check_show_items(parameter.value or ())
                except RobokinError as err:
                    return SetParametersResult(successful=False, reason=str(err))
        return SetParametersResult(successful=True)

    def _store_show(self, parameters) -> None:
        for parameter in parameters:
            if parameter.name == "show":
                self._show = tuple(parameter.value or ())

    def _on_joint_state(self, msg: JointState) -> None:
        # checked on arrival: a refused state must not replace the valid one the markers are drawn from
        if not concerns_chain(msg, self._chain_joints):
            return
        now = receive_time()
        try:
            positions = measurement_from_joint_state(msg, self._robot.joint_names, now).positions
            self._stamp_order.admit(self._robot.joint_names, time_nanoseconds(msg.header.stamp), now)
        except RobokinError as err:
            self._log.warning(f"joint state {err}"[:LOG_KEY_CHARS], f"ignoring joint state: {err}")
            return
        self._positions = positions

    def _current(self, need_polytope: bool, tip: str | None = None) -> tuple[CapabilityAnalysis,
                                                                             ForcePolytope | None]:
        """Analysis (and polytope) at the newest joint state, of `tip` (None: the single-tip robot's chain, or the
        first tip); RobokinError when there is none or it is bad."""
        positions = self._newest_positions()
        cfg, torque = self._config, self._torque
        if len(self._robot.tip_frames) == 1:
            analysis = analyze(self._robot, positions, torque.limits, torque.reason, cfg.singular_sigma)
        else:
            analysis = analyze_tip(self._robot, positions, tip or self._robot.tip_frame, torque.limits,
                                   torque.reason, cfg.singular_sigma)
        polytope = tool_force_polytope(analysis, cfg.polytope_method, cfg.singular_sigma) if need_polytope else None
        return analysis, polytope

    def _newest_positions(self) -> np.ndarray:
        if self._positions is None:
            raise RobokinError(f"no joint state accepted yet on {self._config.joint_topic}")
        return self._positions

    def _tick(self) -> None:
        try:
            markers = self._markers()
        except RobokinError as err:
            if self._positions is None:
                self._log.info("waiting", f"no markers: {err}")
            else:
                self._log.error(str(err)[:LOG_KEY_CHARS], f"no markers: {err}")
            return
        self._publisher.publish(markers)

    def _markers(self) -> MarkerArray:
        """Every marker of this tick: the tool's, or each tip's and the held object's (see the module docstring)."""
        need_polytope, frame, stamp = "polytope" in self._show, self._robot.base_frame, self.get_clock().now().to_msg()
        if len(self._robot.tip_frames) == 1:
            return capability_markers(*self._current(need_polytope), self._show, self._config, frame, stamp)
        markers = []
        for tip in self._robot.tip_frames:
            markers += capability_markers(*self._current(need_polytope, tip), self._show, self._config, frame, stamp,
                                          tip).markers
        if self._config.held_object:
            cfg, torque = self._config, self._torque
            held = analyze_held_object(self._robot, self._newest_positions(), torque.limits, torque.reason,
                                       cfg.singular_sigma)
            markers += capability_markers(held, None, self._show, cfg, frame, stamp, HELD_OBJECT_NAMESPACE).markers
        else:
            markers += deleted_markers(HELD_OBJECT_NAMESPACE, frame, stamp).markers
        return MarkerArray(markers=markers)

    def _on_export(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        try:
            _, polytope = self._current(need_polytope=True)
            if polytope is None:
                raise RobokinError(self._torque.reason)
            path = write_stl(self._config.stl_path, polytope)
        except (RobokinError, OSError) as err:
            response.success, response.message = False, f"no STL written: {err}"
            return response
        response.success = True
        response.message = (f"wrote {path} ({len(polytope.triangles)} triangles, {polytope.method} force "
                            f"polytope in newtons, base-frame axes, volume {polytope.volume:.4g} N^3)")
        self.get_logger().info(response.message)
        return response


def main(args: list[str] | None = None) -> int:
    """Console script `capability_node`."""
    return run_node(CapabilityNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
