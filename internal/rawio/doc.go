// Package rawio reads and writes non-blocking descriptors (pipes and
// sockets) with raw system calls, waiting in the runtime's poller when
// there is nothing to read or no room to write, as the os and net
// packages' own reads and writes do.
//
// A gateway wants this on the pipes and connections of every message: a
// read or write of an os.File or a net.Conn enters the scheduler's
// system-call state, and when the process's processors were all idle (a
// gateway waiting for the next message), that wakes the runtime's monitor
// thread (sysmon), which then checks the processors every 20 µs for a
// millisecond. On a virtual machine each of those wake-ups is a context
// switch the hypervisor makes costly: a chartgate serve process spent
// over a quarter of its CPU there. A raw call on a non-blocking
// descriptor returns at once, so it need not enter that state.
//
// Raw calls are made on Linux only; elsewhere [File], [Conn],
// [Listener] and [Dialer] return what they are given.
package rawio
