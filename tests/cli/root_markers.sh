#!/usr/bin/env bash
# coderag root, and the root rule's markers the same in every editor client.
#   root_markers.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/root_markers.py" "$1" "$(dirname "$0")/../../editors"
