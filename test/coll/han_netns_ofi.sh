#!/bin/sh
# han_netns.sh with btl ofi between the two namespace hosts (see there).
RAILTEST_NAME=han_netns_ofi HAN_NETNS_BTL=ofi exec bash "$(dirname "$0")/han_netns.sh" "$@"
