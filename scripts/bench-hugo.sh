#!/bin/sh
# bench-hugo.sh: time Debian's Hugo on the same 10,000 Markdown pages that
# BenchmarkBuildPages10k (build/bench_test.go) renders, with a minimal theme
# comparable to our default one (baseof + head/header/footer partials, a page
# layout, the same style.css; sitemap and robots.txt on, feeds and taxonomies
# off). Prints Hugo's pages per second; compare with
#   go test -run '^$' -bench BuildPages10k -benchtime 3x ./build
#
# Usage: scripts/bench-hugo.sh [RUNS]   (env N: number of pages, default 10000)
set -eu
N=${N:-10000}
RUNS=${1:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

if ! command -v hugo >/dev/null 2>&1; then
	echo "hugo not found; installing Debian's package" >&2
	apt-get update
	apt-get install -y hugo
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM
SITE="$WORK/site"
mkdir -p "$SITE/layouts/_default" "$SITE/layouts/partials" "$SITE/static"

(cd "$ROOT" && go run ./build/buildtest/genpages -n "$N" -out "$SITE/content")
cp "$ROOT/themes/default/static/style.css" "$ROOT/themes/default/static/favicon.svg" "$SITE/static/"

cat > "$SITE/hugo.toml" <<'TOML'
baseURL = "https://observer.example.org/"
title = "Test Observer"
languageCode = "en"
disableKinds = ["taxonomy", "term", "RSS"]
enableRobotsTXT = true
[markup.goldmark.renderer]
unsafe = false
[markup.goldmark.parser]
autoHeadingID = true
TOML

cat > "$SITE/layouts/_default/baseof.html" <<'HTML'
<!DOCTYPE html>
<html lang="{{ .Site.LanguageCode }}">
<head>
{{ partial "head.html" . }}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
{{ partial "header.html" . }}
<main id="main" tabindex="-1">
{{ block "main" . }}{{ end }}
</main>
{{ partial "footer.html" . }}
</body>
</html>
HTML
cat > "$SITE/layouts/partials/head.html" <<'HTML'
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ if .IsHome }}{{ .Site.Title }}{{ else }}{{ .Title }} · {{ .Site.Title }}{{ end }}</title>
<meta name="description" content="{{ with .Description }}{{ . }}{{ else }}{{ .Site.Params.description }}{{ end }}">
<meta name="color-scheme" content="light dark">
<link rel="stylesheet" href="{{ "style.css" | relURL }}">
<link rel="icon" href="{{ "favicon.svg" | relURL }}" type="image/svg+xml">
<link rel="canonical" href="{{ .Permalink }}">
HTML
cat > "$SITE/layouts/partials/header.html" <<'HTML'
<header class="site-header">
  <div class="wrap">
    <a class="brand" href="{{ "" | relURL }}"><img src="{{ "favicon.svg" | relURL }}" alt="" width="28" height="28"> {{ .Site.Title }}</a>
    <nav aria-label="Main">
      <ul>
        <li><a href="{{ "" | relURL }}">New</a></li>
        <li><a href="{{ "live/" | relURL }}">Live</a></li>
      </ul>
    </nav>
  </div>
</header>
HTML
cat > "$SITE/layouts/partials/footer.html" <<'HTML'
<footer class="site-footer">
  <div class="wrap">
    <p>Data: <a href="{{ "new.atom" | relURL }}">Atom feed</a> · <a href="{{ "live.txt" | relURL }}">live.txt</a></p>
  </div>
</footer>
HTML
cat > "$SITE/layouts/_default/single.html" <<'HTML'
{{ define "main" }}
<article class="wrap prose">
  <h1>{{ .Title }}</h1>
  {{- if not .Date.IsZero }}
  <p class="muted"><time datetime="{{ .Date.UTC.Format "2006-01-02T15:04:05Z07:00" }}">{{ .Date.UTC.Format "2006-01-02" }}</time></p>
  {{- end }}
  {{ .Content }}
</article>
{{ end }}
HTML
cat > "$SITE/layouts/_default/list.html" <<'HTML'
{{ define "main" }}<div class="wrap"><h1>{{ .Title }}</h1></div>{{ end }}
HTML
cat > "$SITE/layouts/index.html" <<'HTML'
{{ define "main" }}<div class="wrap"><h1>{{ .Site.Title }}</h1></div>{{ end }}
HTML
cat > "$SITE/layouts/404.html" <<'HTML'
{{ define "main" }}<div class="wrap prose"><h1>Page not found</h1></div>{{ end }}
HTML

hugo version
i=1
while [ "$i" -le "$RUNS" ]; do
	rm -rf "$WORK/public" "$SITE/resources"
	start=$(date +%s.%N)
	hugo --quiet --source "$SITE" --destination "$WORK/public"
	end=$(date +%s.%N)
	secs=$(echo "$end - $start" | bc -l)
	pages=$(find "$WORK/public" -name index.html | wc -l)
	rate=$(echo "$N / $secs" | bc -l)
	printf 'run %d: %d index.html files in %.2f s: %.0f pages/s\n' "$i" "$pages" "$secs" "$rate"
	i=$((i + 1))
done
