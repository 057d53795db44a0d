"""The classroom toolbox: homogeneous transforms, DH robots, closed-form IK, workspace maps, calibration, wrench
mapping and motion profiles, on the same core as the servo and path IK (a DH arm becomes a RobotModel)."""
