package funcs

import (
	"fmt"
	"html/template"
)

// Safe is the safe namespace: it marks text as trusted for the place it
// is printed, so that html/template does not escape it. Only a theme's
// own text should pass through it; what the instances report never does.
type Safe struct{}

func safeText(fn string, v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", fn, err)
	}
	return s, nil
}

// HTML marks s as HTML.
func (*Safe) HTML(s any) (template.HTML, error) {
	t, err := safeText("safeHTML", s)
	return template.HTML(t), err
}

// HTMLAttr marks s as an attribute (name="value").
func (*Safe) HTMLAttr(s any) (template.HTMLAttr, error) {
	t, err := safeText("safeHTMLAttr", s)
	return template.HTMLAttr(t), err
}

// CSS marks s as CSS.
func (*Safe) CSS(s any) (template.CSS, error) {
	t, err := safeText("safeCSS", s)
	return template.CSS(t), err
}

// JS marks s as a JavaScript expression.
func (*Safe) JS(s any) (template.JS, error) {
	t, err := safeText("safeJS", s)
	return template.JS(t), err
}

// JSStr marks s as the content of a JavaScript string.
func (*Safe) JSStr(s any) (template.JSStr, error) {
	t, err := safeText("safeJSStr", s)
	return template.JSStr(t), err
}

// URL marks s as a URL, which html/template would otherwise refuse when
// its scheme is not http, https or mailto.
func (*Safe) URL(s any) (template.URL, error) {
	t, err := safeText("safeURL", s)
	return template.URL(t), err
}
