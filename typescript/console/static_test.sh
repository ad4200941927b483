#!/usr/bin/env bash
# Checks the built console (//typescript/console:static): index.html loads
# ./app.js and ./console.css and nothing from another origin, and app.js is the
# bundled React app with the console's own code in it.
# Arguments: the path of the built index.html.
set -euo pipefail
dir="$(dirname "$1")"
page="${dir}/index.html"
fail() { echo "static_test: $*" >&2; exit 1; }
grep -q 'src="./app.js"' "${page}" || fail "index.html does not load ./app.js"
grep -q 'href="./console.css"' "${page}" || fail "index.html does not load ./console.css"
if grep -Eq '(src|href)="(https?:)?//' "${page}"; then fail "index.html loads from another origin"; fi
size=$(wc -c < "${dir}/app.js")
((size > 100000)) || fail "app.js is only ${size} bytes: not the bundled app"
grep -q 'console/api/sessions' "${dir}/app.js" || fail "app.js lacks the console's API calls"
grep -q 'ui-stream' "${dir}/app.js" || fail "app.js lacks DexChatTransport"
grep -q 'createRoot' "${dir}/app.js" || grep -q 'react' "${dir}/app.js" || fail "app.js lacks React"
grep -q 'bar-retried' "${dir}/console.css" || fail "console.css lacks the timeline styles"
echo "static_test: ${dir} ok (app.js ${size} bytes)"
