// Command fedisim runs the simulated Fediverse of package fedisim on
// loopback, for the offline demo and benchmarks: it writes the CA and a seed
// list and the crawler's --connect-to rules (one per host, each to a
// loopback address of its own, so that a crawl is polite per address as on
// the Internet), prints the catch-all --connect-to value, and serves until
// SIGINT or SIGTERM. A plain-HTTP control endpoint lets scripts change the
// simulated day between crawl passes.
//
// It is a separate binary, not an observer subcommand, so that the crawler
// never links the simulator.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fediverse-observer/observer/fedisim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fedisim:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fedisim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 1, "seed: the same seed gives the same Fediverse")
	instances := fs.Int("instances", 2000, "number of generated instances")
	listen := fs.String("listen", "127.0.0.1:8443", "TLS listen address (loopback only)")
	caOut := fs.String("ca-out", "", "write the CA certificate (PEM) to this file")
	seedsOut := fs.String("seeds-out", "", "write a seed list (one host per line) to this file")
	connectToOut := fs.String("connect-to-out", "", "write the crawler's --connect-to rules, one a line, to this file: each host to its own address of the simulator's, every other name to --listen")
	seeds := fs.Int("seeds", 10, "number of hosts in the seed list")
	day := fs.Int("day", 0, "initial simulated day")
	day0 := fs.String("day0", "2026-01-01", "date of day 0 (YYYY-MM-DD), for the control endpoint's /now")
	hostile := fs.Bool("hostile", false, "serve the hostile hosts and list them in hubs' peers lists")
	control := fs.String("control", "", "plain-HTTP control address (loopback only), e.g. 127.0.0.1:8444")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // the usage was asked for, and printed
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	d0, err := time.Parse("2006-01-02", *day0)
	if err != nil {
		return fmt.Errorf("--day0: %w", err)
	}
	if err := fedisim.CheckLoopback(*listen); err != nil {
		return err
	}
	if *control != "" {
		if err := fedisim.CheckLoopback(*control); err != nil {
			return fmt.Errorf("--control: %w", err)
		}
	}

	sim, err := fedisim.New(fedisim.Config{Seed: *seed, Instances: *instances, Day0: d0, HostileHosts: *hostile, Logger: logger})
	if err != nil {
		return err
	}
	sim.SetDay(*day)
	if err := sim.Start(*listen); err != nil {
		return err
	}
	defer sim.Close()
	if *caOut != "" {
		if err := sim.WriteCA(*caOut); err != nil {
			return err
		}
	}
	if *seedsOut != "" {
		list := strings.Join(sim.Seeds(*seeds), "\n") + "\n"
		if err := os.WriteFile(*seedsOut, []byte(list), 0o644); err != nil {
			return fmt.Errorf("write seeds: %w", err)
		}
	}

	if *connectToOut != "" {
		rules := strings.Join(sim.ConnectToEach(), "\n") + "\n"
		if err := os.WriteFile(*connectToOut, []byte(rules), 0o644); err != nil {
			return fmt.Errorf("write --connect-to rules: %w", err)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var ctl *http.Server
	if *control != "" {
		ln, err := net.Listen("tcp", *control)
		if err != nil {
			return fmt.Errorf("control listen %s: %w", *control, err)
		}
		ctl = &http.Server{Handler: controlHandler(sim), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := ctl.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("control server", "err", err)
			}
		}()
		defer ctl.Close()
		fmt.Fprintf(stdout, "control: http://%s/\n", ln.Addr())
	}
	fmt.Fprintf(stdout, "listening: %s\nconnect-to: %s\n", sim.Addr(), sim.ConnectTo())
	ca := *caOut
	if ca == "" {
		// No file was written to name: say how to get one.
		ca = "FILE (none written: start fedisim with --ca-out FILE)"
	}
	fmt.Fprintf(stdout, "crawler flags: --connect-to '%s' --allow-addr 127.0.0.0/8 --ca-cert %s\n", sim.ConnectTo(), ca)
	logger.Info("fedisim running", "addr", sim.Addr(), "instances", *instances, "seed", *seed, "day", sim.Day(), "hostile", *hostile)
	<-ctx.Done()
	logger.Info("fedisim stopping", "stats", sim.Stats())
	return nil
}

// controlHandler serves the control endpoint:
//
//	GET  /day            current day
//	POST /day?d=N        set the day
//	POST /now?t=RFC3339  set the day from a time (days since --day0)
//	GET  /stats          counters as JSON
//	GET  /seeds?n=N      seed list, one host per line
//	GET  /ca.pem         the CA certificate
func controlHandler(sim *fedisim.Sim) http.Handler {
	mux := http.NewServeMux()
	writeDay := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "%d\n", sim.Day())
	}
	mux.HandleFunc("GET /day", func(w http.ResponseWriter, r *http.Request) { writeDay(w) })
	mux.HandleFunc("POST /day", func(w http.ResponseWriter, r *http.Request) {
		d, err := strconv.Atoi(r.URL.Query().Get("d"))
		if err != nil {
			http.Error(w, "d must be an integer day", http.StatusBadRequest)
			return
		}
		sim.SetDay(d)
		writeDay(w)
	})
	mux.HandleFunc("POST /now", func(w http.ResponseWriter, r *http.Request) {
		t, err := time.Parse(time.RFC3339, r.URL.Query().Get("t"))
		if err != nil {
			http.Error(w, "t must be an RFC 3339 time", http.StatusBadRequest)
			return
		}
		sim.SetNow(t)
		writeDay(w)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(sim.Stats())
	})
	mux.HandleFunc("GET /seeds", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n < 1 || n > 100000 {
			http.Error(w, "n must be between 1 and 100000", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, strings.Join(sim.Seeds(n), "\n")+"\n")
	})
	mux.HandleFunc("GET /ca.pem", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-pem-file")
		w.Write(sim.CAPEM())
	})
	return mux
}
