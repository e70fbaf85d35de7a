// Package buildinfo reports what binary is running.
package buildinfo

import (
	"log/slog"
	"runtime"
	"runtime/debug"
)

// Version is set at link time (-ldflags "-X …buildinfo.Version=v0.1.0");
// otherwise it is "dev".
var Version = "dev"

// Info describes the running build.
type Info struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

// Read returns the build's description.
func Read() Info {
	info := Info{Version: Version, Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	return info
}

// LogValue renders the build compactly in logs.
func (i Info) LogValue() slog.Value {
	return slog.GroupValue(slog.String("version", i.Version), slog.String("revision", i.Revision),
		slog.Bool("modified", i.Modified), slog.String("go", i.Go))
}
