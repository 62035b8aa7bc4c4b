package build

import "strconv"

// Pager is one page of a paginated list, with Hugo's methods.
type Pager struct {
	number int
	pg     *paginator
}

type paginator struct {
	list   *Page
	all    Pages
	size   int
	pagers []*Pager
}

func newPaginator(list *Page, all Pages, size int) *paginator {
	size = max(size, 1)
	pg := &paginator{list: list, all: all, size: size}
	n := max((len(all)+size-1)/size, 1)
	for i := 1; i <= n; i++ {
		pg.pagers = append(pg.pagers, &Pager{number: i, pg: pg})
	}
	return pg
}

func (p *Pager) PageNumber() int { return p.number }

// Pages are this pager's pages.
func (p *Pager) Pages() Pages {
	lo := (p.number - 1) * p.pg.size
	hi := min(lo+p.pg.size, len(p.pg.all))
	if lo >= hi {
		return nil
	}
	return p.pg.all[lo:hi]
}
func (p *Pager) NumberOfElements() int      { return len(p.Pages()) }
func (p *Pager) TotalPages() int            { return len(p.pg.pagers) }
func (p *Pager) TotalNumberOfElements() int { return len(p.pg.all) }
func (p *Pager) PagerSize() int             { return p.pg.size }
func (p *Pager) PageSize() int              { return p.pg.size }
func (p *Pager) HasPrev() bool              { return p.number > 1 }
func (p *Pager) HasNext() bool              { return p.number < len(p.pg.pagers) }
func (p *Pager) Pagers() []*Pager           { return p.pg.pagers }
func (p *Pager) First() *Pager              { return p.pg.pagers[0] }
func (p *Pager) Last() *Pager               { return p.pg.pagers[len(p.pg.pagers)-1] }

func (p *Pager) Prev() *Pager {
	if !p.HasPrev() {
		return nil
	}
	return p.pg.pagers[p.number-2]
}

func (p *Pager) Next() *Pager {
	if !p.HasNext() {
		return nil
	}
	return p.pg.pagers[p.number]
}

// URL is the pager's address: the list's own for the first, then
// LIST/page/N/, as Hugo's.
func (p *Pager) URL() string {
	return p.pg.list.site.relPath(pagerPath(p.pg.list, p.number))
}

// pagerPath is the site path of pager n of a list page.
func pagerPath(list *Page, n int) string {
	if n <= 1 {
		return list.relPath
	}
	return list.relPath + list.site.pagerPath + "/" + strconv.Itoa(n) + "/"
}
