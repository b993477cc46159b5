package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paymentsd/paymentsd/internal/proccpu"
)

// server is a paymentsd process the tool started (spawn mode).
type server struct {
	bin, dbURL, creds, addr string
	logw                    io.Writer
	extraArgs               []string
	env                     []string // added to the environment last (so it wins)

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	peakRSS int64 // max VmHWM over every incarnation, bytes
	starts  int
	// exitedCPU is the user and system time of the incarnations that have
	// exited (killed ones included: the kernel accounts them to the wait).
	exitedCPU time.Duration
}

// buildServer compiles ./cmd/paymentsd into dir and returns the binary.
func buildServer(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "paymentsd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/paymentsd")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/paymentsd: %w", err)
	}
	return bin, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (s *server) URL() string { return "http://" + s.addr }

// start launches the process and waits until it is ready.
func (s *server) start(ctx context.Context) error {
	args := append([]string{"serve", "-addr", s.addr, "-database-url", s.dbURL, "-rate-limit", "-1", // 0 means the default (100/s) in httpapi.New
		"-log-level", "warn", "-shutdown-timeout", "1s"}, s.extraArgs...)
	cmd := exec.Command(s.bin, args...)
	cmd.Env = append(os.Environ(), "PAYMENTS_SANDBOX_TOKEN="+s.creds, "PAYMENTS_DATABASE_URL="+s.dbURL)
	if _, set := os.LookupEnv("PAYMENTS_WEBHOOK_ALLOW_PRIVATE"); !set {
		// The tool's webhook receiver is on loopback; a server on
		// PostgreSQL refuses private endpoints unless told otherwise.
		cmd.Env = append(cmd.Env, "PAYMENTS_WEBHOOK_ALLOW_PRIVATE=true")
	}
	if k := benchKeys(s.dbURL); k != "" {
		cmd.Env = append(cmd.Env, "PAYMENTS_KEYS="+k)
	}
	cmd.Env = append(cmd.Env, s.env...)
	cmd.Stdout, cmd.Stderr = s.logw, s.logw
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		if st := cmd.ProcessState; st != nil {
			s.mu.Lock()
			s.exitedCPU += st.UserTime() + st.SystemTime()
			s.mu.Unlock()
		}
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.starts++
	s.mu.Unlock()
	go s.sampleRSS(cmd.Process.Pid, done)
	deadline := time.Now().Add(60 * time.Second)
	hc := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("paymentsd exited during start")
		case <-ctx.Done():
			s.kill()
			return ctx.Err()
		default:
		}
		resp, err := hc.Get(s.URL() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill()
	return fmt.Errorf("paymentsd not ready after 60s")
}

// sampleRSS records the process's VmHWM until it exits.
func (s *server) sampleRSS(pid int, done chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if v, err := readVmHWM(pid); err == nil {
			s.mu.Lock()
			if v > s.peakRSS {
				s.peakRSS = v
			}
			s.mu.Unlock()
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// readVmHWM reads a process's peak resident set size in bytes.
func readVmHWM(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseVmHWM(f)
}

// parseVmHWM finds "VmHWM: N kB" in a /proc/PID/status text.
func parseVmHWM(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM line")
}

// kill sends SIGKILL and waits for the process to go.
func (s *server) kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// stop asks the process to shut down (SIGTERM) and waits.
func (s *server) stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
}

// CPU is the CPU time every incarnation used so far; ok is false when the
// running one's cannot be read (no /proc).
func (s *server) CPU() (time.Duration, bool) {
	s.mu.Lock()
	cmd, done, total := s.cmd, s.done, s.exitedCPU
	s.mu.Unlock()
	if cmd == nil {
		return total, true
	}
	select {
	case <-done:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.exitedCPU, true
	default:
	}
	t, err := proccpu.Of(cmd.Process.Pid)
	if err != nil {
		return total, false
	}
	return total + t, true
}

// PeakRSS is the largest VmHWM seen.
func (s *server) PeakRSS() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakRSS
}

// metricsPeakRSS samples process_resident_memory_bytes from /metrics until
// ctx ends and returns the largest value (drive-a-running-server mode).
func metricsPeakRSS(ctx context.Context, serverURL string) func() int64 {
	var mu sync.Mutex
	var peak int64
	go func() {
		hc := &http.Client{Timeout: 2 * time.Second}
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if resp, err := hc.Get(serverURL + "/metrics"); err == nil {
				v := parseProcessRSS(resp.Body)
				resp.Body.Close()
				mu.Lock()
				if v > peak {
					peak = v
				}
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 { mu.Lock(); defer mu.Unlock(); return peak }
}

// parseProcessRSS reads process_resident_memory_bytes from a Prometheus
// text exposition.
func parseProcessRSS(r io.Reader) (rss int64) {
	eachSample(r, func(name string, v float64) {
		if name == "process_resident_memory_bytes" && rss == 0 {
			rss = int64(v)
		}
	})
	return rss
}

// eachSample calls fn with the name and value of every unlabelled sample of
// a Prometheus text exposition (comments, labelled series and values that
// are not numbers are skipped).
func eachSample(r io.Reader, fn func(name string, v float64)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			fn(name, v)
		}
	}
}

// benchKeys gives a spawned server on PostgreSQL, which does not start
// without key-encryption keys, a key derived from the database URL, so that
// every process the tool starts on one benchmark database (restarts, seed
// then reads) seals and opens with the same key. Benchmark databases are
// throwaway; an operator's own PAYMENTS_KEYS or PAYMENTS_KEYS_FILE wins.
// SQLite needs none: paymentsd keeps a key file beside the database.
func benchKeys(dbURL string) string {
	if os.Getenv("PAYMENTS_KEYS") != "" || os.Getenv("PAYMENTS_KEYS_FILE") != "" || strings.HasPrefix(dbURL, "sqlite:") {
		return ""
	}
	sum := sha256.Sum256([]byte("paymentsbench key for " + dbURL))
	return "bench:" + base64.StdEncoding.EncodeToString(sum[:])
}
