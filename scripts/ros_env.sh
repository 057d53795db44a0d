# Sourced by demo.sh and test.sh: the runtime settings every ROS process here needs.
# DDS discovery stays on loopback; a per-run domain keeps parallel runs on one machine apart.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$(( (RANDOM % 100) + 1 ))}
export MPLBACKEND=Agg
