// Package deploy holds no code: it is the home of the deployment examples
// (systemd units, the nginx server block) and of the tests that keep them,
// the GitHub Actions workflow and the Makefile's deploy target consistent
// with the program they run.
package deploy
