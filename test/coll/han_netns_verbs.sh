#!/bin/sh
# han_netns.sh with btl verbs between the two namespace hosts (see there).
RAILTEST_NAME=han_netns_verbs HAN_NETNS_BTL=verbs exec bash "$(dirname "$0")/han_netns.sh" "$@"
