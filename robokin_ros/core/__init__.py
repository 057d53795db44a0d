"""The algorithm core of robokin_ros: numpy and Pinocchio only, no rclpy and no message types."""
