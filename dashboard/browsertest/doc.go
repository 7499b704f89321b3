// Package browsertest drives Plenum's dashboard in headless Chromium: it
// fills a SQLite database with a real workload through the public API,
// serves the dashboard with httptest, and loads, filters, pages and acts
// on every page, saving a screenshot of each. It is a module of its own,
// so that chromedp never enters the graph of Plenum's users.
package browsertest
