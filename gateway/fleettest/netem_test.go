package fleettest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel here has no netem qdisc, so the harness degrades a link itself, at the packet
// level: the router sends the link's packets, in the directions chosen, to a TUN device whose
// other end is this process, which drops each with the loss probability, holds the rest for the
// delay, in order, and writes them back into the router, which forwards them on as it would
// have. TCP sees what it sees through netem: late and missing segments, its own retransmissions;
// connections stay open across the change. A packet's time in this process besides the delay
// (its read, its write) is microseconds.

// degradeTable is the routing table of the router's degraded directions.
const degradeTable = "77"

// linkDegrader is a TUN device in the router namespace and the loop that delays and drops what
// the router sends it.
type linkDegrader struct {
	lab   *netLab
	name  string
	delay time.Duration
	loss  float64

	tun  *os.File
	mu   sync.Mutex
	dirs [][2]*netNode // the directions routed through it

	queue chan held
	done  sync.WaitGroup
}

type held struct {
	due time.Time
	b   []byte
}

// parseCIDR is net.ParseCIDR.
var parseCIDR = net.ParseCIDR

// degrade sends the packets between endpoints a and b, both directions, through a device that
// delays every packet from a to b by delay and drops each packet, either way, with probability
// loss. undegrade puts the link back as it was; the lab's cleanup does too.
func (lab *netLab) degrade(a, b string, delay time.Duration, loss float64) *linkDegrader {
	lab.t.Helper()
	d := &linkDegrader{lab: lab, name: "tdeg", delay: delay, loss: loss, queue: make(chan held, 1<<16)}
	err := inNetns(lab.router, func() error {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		var req [unix.IFNAMSIZ + 64]byte
		copy(req[:], d.name)
		*(*uint16)(unsafe.Pointer(&req[unix.IFNAMSIZ])) = unix.IFF_TUN | unix.IFF_NO_PI
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&req[0]))); errno != 0 {
			unix.Close(fd)
			return fmt.Errorf("TUNSETIFF: %w", errno)
		}
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(fd)
			return err
		}
		d.tun = os.NewFile(uintptr(fd), d.name)
		return nil
	})
	if err != nil {
		lab.t.Fatalf("making the TUN device of a degraded link: %v", err)
	}
	lab.t.Cleanup(d.undegrade)
	// Packets coming back from the device arrive on it with the endpoints' source addresses:
	// reverse-path filtering would take them for spoofed.
	lab.inNs(lab.router, "sysctl", "-q", "-w", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf."+d.name+".rp_filter=0")
	lab.run("ip", "-n", lab.router, "link", "set", d.name, "up")
	lab.run("ip", "-n", lab.router, "route", "add", "default", "dev", d.name, "table", degradeTable)
	na, nb := lab.node(a), lab.node(b)
	for _, dir := range [][2]*netNode{{na, nb}, {nb, na}} {
		lab.run("ip", "-n", lab.router, "rule", "add", "pref", "90", "iif", dir[0].link, "to", dir[1].subnet(), "table", degradeTable)
		d.dirs = append(d.dirs, dir)
	}
	d.done.Add(2)
	go d.read(na.subnet(), nb.subnet())
	go d.write()
	return d
}

// read takes the router's packets from the device: drops some, stamps the rest with when they
// are due (the delay for those from subnet from to subnet to, at once for the others).
func (d *linkDegrader) read(from, to string) {
	defer d.done.Done()
	defer close(d.queue)
	_, fromNet, _ := parseCIDR(from)
	_, toNet, _ := parseCIDR(to)
	buf := make([]byte, 65536)
	for {
		n, err := d.tun.Read(buf)
		if err != nil {
			return
		}
		if n < 20 || buf[0]>>4 != 4 {
			continue
		}
		if rand.Float64() < d.loss {
			continue
		}
		due := time.Now()
		if fromNet.Contains(buf[12:16]) && toNet.Contains(buf[16:20]) {
			due = due.Add(d.delay)
		}
		d.queue <- held{due: due, b: append([]byte(nil), buf[:n]...)}
	}
}

// write gives each packet back to the router when it is due: the delayed direction's in order
// (one delay for all keeps them so), the other direction's at once, as on a link whose two
// directions are independent.
func (d *linkDegrader) write() {
	defer d.done.Done()
	var late []held
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var wake <-chan time.Time
		if len(late) > 0 {
			timer.Reset(time.Until(late[0].due))
			wake = timer.C
		}
		select {
		case h, ok := <-d.queue:
			if !ok {
				return
			}
			if !h.due.After(time.Now()) {
				d.tun.Write(h.b)
				continue
			}
			late = append(late, h)
		case <-wake:
		}
		for len(late) > 0 && !late[0].due.After(time.Now()) {
			d.tun.Write(late[0].b)
			late = late[1:]
		}
	}
}

// undegrade routes the link directly again and ends the device's loops.
func (d *linkDegrader) undegrade() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tun == nil {
		return
	}
	for _, dir := range d.dirs {
		d.lab.run("ip", "-n", d.lab.router, "rule", "del", "pref", "90", "iif", dir[0].link, "to", dir[1].subnet(), "table", degradeTable)
	}
	d.dirs = nil
	d.tun.Close()
	d.done.Wait()
	d.tun = nil
}
