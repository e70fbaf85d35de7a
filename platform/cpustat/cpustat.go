// Package cpustat reads how much CPU time the machine and this process
// have had, for benchmarks that report CPU milliseconds per operation.
// Throughput on a shared machine moves with what its neighbours do (the
// hypervisor's steal); the CPU an operation costs moves far less, so the
// benchmarks report both. Linux only: it reads /proc/stat.
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
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal …
	if len(f) < 9 || f[0] != "cpu" {
		return Times{}, fmt.Errorf("cpustat: /proc/stat begins %q", line)
	}
	tick := func(i int) (time.Duration, error) {
		v, err := strconv.ParseInt(f[i], 10, 64)
		// USER_HZ is 100 on Linux.
		return time.Duration(v) * 10 * time.Millisecond, err
	}
	var t Times
	for _, i := range []int{1, 2, 3, 6, 7} {
		d, err := tick(i)
		if err != nil {
			return Times{}, fmt.Errorf("cpustat: /proc/stat: %w", err)
		}
		t.Busy += d
	}
	if t.Steal, err = tick(8); err != nil {
		return Times{}, fmt.Errorf("cpustat: /proc/stat: %w", err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Times{}, fmt.Errorf("cpustat: getrusage: %w", err)
	}
	t.Self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return t, nil
}

// Sub is what was spent between an earlier reading and t.
func (t Times) Sub(t0 Times) Times {
	return Times{Busy: t.Busy - t0.Busy, Steal: t.Steal - t0.Steal, Self: t.Self - t0.Self}
}
