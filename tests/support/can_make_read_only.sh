#!/bin/sh
# Exit 0 where tests can make a file read-only for the comera CLI (read_only.h): chmod for a user
# other than root, a read-only bind mount in a private mount namespace for root.
[ "$(id -u)" != 0 ] && exit 0
d=$(mktemp -d) || exit 1
unshare -m sh -c "mount --bind '$d' '$d' && mount -o remount,ro,bind '$d' '$d'"
rc=$?
rmdir "$d"
exit $rc
