package duck

import (
	"context"
	"time"

	"github.com/fediverse-observer/observer"
)

// SiteData is the Reader as the site builder's data source (build.Data) as
// of Now, the moment its views were defined for: the recent changes stop
// there, as the live and new lists do, and the templates' sql function gets
// rows as maps, through the Reader's read-only QueryMaps.
type SiteData struct {
	*Reader
	Now time.Time
}

// RecentTransitions are at most limit transitions up to Now, newest first.
func (d SiteData) RecentTransitions(ctx context.Context, limit int) ([]observer.Transition, error) {
	return d.Reader.RecentTransitions(ctx, d.Now, limit)
}

// Query runs a read-only query over the views, rows as column->value maps.
func (d SiteData) Query(ctx context.Context, query string, args ...any) ([]map[string]any, error) {
	return d.Reader.QueryMaps(ctx, query, args...)
}
