#!/usr/bin/env bash
# Fails naming each file under a crate's tests/integration/ that no `mod` declaration
# reaches: Cargo compiles only tests/integration/main.rs and the modules it declares, so
# such a file would never be compiled. Each file must be declared by the file that owns
# its folder (main.rs at the top, else the folder's mod.rs or the FOLDER.rs beside it);
# every owner being checked in turn, every file is then reached from main.rs.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
while IFS= read -r file; do
  dir=$(dirname "$file") base=$(basename "$file" .rs)
  if [ "$base" = mod ]; then base=$(basename "$dir") dir=$(dirname "$dir"); fi
  case "$dir" in
    */tests/integration) [ "$base" = main ] && continue; owners=("$dir/main.rs") ;;
    *) owners=("$dir/mod.rs" "$dir.rs") ;;
  esac
  if ! grep -Eqs "^[[:space:]]*(pub(\([a-z]+\))? )?mod $base;" "${owners[@]}"; then
    echo "$file: not declared (no \`mod $base;\` in ${owners[*]}), so it is never compiled"
    status=1
  fi
done < <(find crates/*/tests/integration -name '*.rs' | sort)
exit "$status"
