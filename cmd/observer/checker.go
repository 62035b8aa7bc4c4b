package main

import (
	"context"

	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/internal/cliflag"
	"github.com/fediverse-observer/observer/sandbox"
)

// defaultIsolation runs checks in sandboxed processes where the sandbox
// confines them, in-process elsewhere.
func defaultIsolation() string {
	if sandbox.Confines {
		return "process"
	}
	return "none"
}

// runChecker is the hidden __checker subcommand: the untrusted side of
// --isolation process. It builds its crawler (reading config and CA files)
// before it confines itself, then answers check requests on stdin/stdout,
// which belong to the protocol: logs go to stderr.
func runChecker(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "__checker", "[flags]")
	var c common
	var n network
	c.registerNoData(fs)
	n.register(fs)
	inherited := fs.Bool("connect-to-inherited", false, "read the --connect-to rules from the file the orchestrator passes")
	rootsInherited := fs.Bool("roots-inherited", false, "read the root certificates from the file the orchestrator passes, instead of the system's")
	if err := cliflag.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if *inherited {
		rules, err := sandbox.ReadConnectTo()
		if err != nil {
			return err
		}
		n.connectTo = append(n.connectTo, rules...)
	}
	if *rootsInherited {
		der, err := sandbox.ReadRoots()
		if err != nil {
			return err
		}
		// None: the pool could not read them, and the crawler loads the
		// system's.
		if len(der) > 0 {
			if n.roots, err = crawl.RootPool(der); err != nil {
				return err
			}
		}
	}
	cfg, log, err := c.setup(e)
	if err != nil {
		return err
	}
	opts, crawler, err := n.crawler(cfg, log)
	if err != nil {
		return err
	}
	return sandbox.RunChecker(ctx, crawler, sandbox.ConfineOptions{ReadPaths: n.caCert, ConnectPorts: crawl.ConnectPorts(opts.ConnectTo)}, log)
}

// checkerArgs are the __checker arguments that rebuild this crawl's crawler
// in the child, but for the --connect-to rules and the root certificates,
// which reach it on files (sandbox.PoolOptions.ConnectTo, Roots, which adds
// -roots-inherited).
func checkerArgs(c common, n network) []string {
	args := c.childArgs("__checker")
	if len(n.connectTo) > 0 {
		args = append(args, "-connect-to-inherited")
	}
	for _, v := range n.allowAddr {
		args = append(args, "-allow-addr", v)
	}
	for _, v := range n.caCert {
		args = append(args, "-ca-cert", v)
	}
	return args
}
