// Package cpustat reads how much CPU time the machine and this process
// have had, for benchmarks that report CPU milliseconds per operation
// beside throughput, and the hypervisor's steal, which would make the
// two disagree. Linux only: it reads /proc/stat.
package cpustat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Times is one reading.
type Times struct {
	// Busy is the machine's time on a CPU: user, nice, system, irq and
	// softirq in /proc/stat's first line, not idle, iowait or steal.
	Busy time.Duration
	// Steal is the time the hypervisor gave the machine's CPUs to
	// someone else while it had work for them.
	Steal time.Duration
	// Self is this process's user and system time (getrusage).
	Self time.Duration
}

// Read takes a reading.
func Read() (Times, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Times{}, fmt.Errorf("cpustat: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	t, err := parse(line)
	if err != nil {
		return Times{}, err
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Times{}, fmt.Errorf("cpustat: getrusage: %w", err)
	}
	t.Self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return t, nil
}

// parse reads Busy and Steal from /proc/stat's first line:
// cpu user nice system idle iowait irq softirq steal …, in USER_HZ ticks
// (100 a second on Linux).
func parse(line string) (Times, error) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return Times{}, fmt.Errorf("cpustat: /proc/stat begins %q", line)
	}
	var t Times
	for i, into := range map[int]*time.Duration{1: &t.Busy, 2: &t.Busy, 3: &t.Busy, 6: &t.Busy, 7: &t.Busy, 8: &t.Steal} {
		v, err := strconv.ParseUint(f[i], 10, 63)
		if err != nil {
			return Times{}, fmt.Errorf("cpustat: /proc/stat field %d: %w", i, err)
		}
		*into += time.Duration(v) * 10 * time.Millisecond
	}
	return t, nil
}

// Sub is what was spent between an earlier reading and t.
func (t Times) Sub(t0 Times) Times {
	return Times{Busy: t.Busy - t0.Busy, Steal: t.Steal - t0.Steal, Self: t.Self - t0.Self}
}
