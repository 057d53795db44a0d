"""robokin studio: the capability and kinematics workbench in the browser (viser), on the same core as the nodes.

The pure parts (session, visuals, overlays, keyframes, the planar 2R model) import no viser and no rclpy; the
viser adapters (scene, panels, planar_view, app) and the optional live ROS bridge (live_ros) are thin.
"""
