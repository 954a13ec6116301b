# Sourced by scripts/vscode-*.sh: keep npm, code-server and chromium out of $HOME (they write
# config, caches and crash reports there otherwise; editor-testing.md §4.2 fix 7).
# Expects $E (the cache folder) to be set.
export TMPDIR="$E/tmp"
export npm_config_cache="$E/npm-cache"
export npm_config_update_notifier=false
export XDG_CONFIG_HOME="$E/xdg/config" XDG_DATA_HOME="$E/xdg/data" XDG_STATE_HOME="$E/xdg/state" XDG_CACHE_HOME="$E/xdg/cache"
mkdir -p "$TMPDIR" "$npm_config_cache" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME"
