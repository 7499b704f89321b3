//go:build linux

package privatedb

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
)

// Namespace is a network namespace of its own, joined to the test's by a
// veth pair: a process started in it (Command) reaches a server that
// listens on HostAddr over that pair only, so that Cut can drop every
// packet between them, silently, as a partition does, and Heal let them
// through again.
type Namespace struct {
	name   string
	hostIf string
	nsIf   string
	// HostAddr is the address of the test's side of the pair: give it
	// to a private server (Options.Addr).
	HostAddr string
	// Addr is the address of the namespace's side.
	Addr string
}

// NewNamespace makes a namespace and its veth pair, removed when t ends.
// It skips t (fails it where PLENUM_REQUIRE lists "private") when it
// cannot: not root, no ip or nft command.
func NewNamespace(t TB) *Namespace {
	t.Helper()
	systemUser(t, "root")
	for _, cmd := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(cmd); err != nil {
			skip(t, "no "+cmd+" command (Debian's iproute2 and nftables)")
		}
	}
	tag := fmt.Sprintf("%06x", rand.Uint32()&0xffffff)
	// A link-local /30 of its own: no address of any other network.
	x, y := 1+rand.IntN(253), 4*rand.IntN(63)
	n := &Namespace{
		name:     "plenum" + tag,
		hostIf:   "pl" + tag + "h",
		HostAddr: fmt.Sprintf("169.254.%d.%d", x, y+1),
		Addr:     fmt.Sprintf("169.254.%d.%d", x, y+2),
	}
	n.nsIf = "pl" + tag + "n"
	nsIf := n.nsIf
	t.Cleanup(func() {
		_ = n.Heal()
		_ = exec.Command("ip", "netns", "del", n.name).Run()
		_ = exec.Command("ip", "link", "del", n.hostIf).Run() // gone with the namespace, unless that failed
	})
	for _, args := range [][]string{
		{"netns", "add", n.name},
		{"link", "add", n.hostIf, "type", "veth", "peer", "name", nsIf},
		{"link", "set", nsIf, "netns", n.name},
		{"addr", "add", n.HostAddr + "/30", "dev", n.hostIf},
		{"link", "set", n.hostIf, "up"},
		{"-n", n.name, "addr", "add", n.Addr + "/30", "dev", nsIf},
		{"-n", n.name, "link", "set", nsIf, "up"},
		{"-n", n.name, "link", "set", "lo", "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("privatedb: ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return n
}

// Command returns a command that runs name with args inside the
// namespace.
func (n *Namespace) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.name, name}, args...)...)
}

// Cut drops every packet between the namespace and the test, without a
// reset or an error to either side: a silent partition. Packets are
// dropped as they arrive at the far end of the pair (netdev ingress hooks
// on both of its ends), not as they leave: a packet its sender's own host
// drops is local congestion to TCP, which then never times out.
func (n *Namespace) Cut() error {
	if err := n.nft("", "add table netdev "+n.name); err != nil {
		return err
	}
	if err := n.nft("", "add chain netdev "+n.name+" cut { type filter hook ingress device "+n.hostIf+" priority 0; policy drop; }"); err != nil {
		return err
	}
	if err := n.nft(n.name, "add table netdev "+n.name); err != nil {
		return err
	}
	return n.nft(n.name, "add chain netdev "+n.name+" cut { type filter hook ingress device "+n.nsIf+" priority 0; policy drop; }")
}

// Heal lets packets through again.
func (n *Namespace) Heal() error {
	return errors.Join(n.nftQuiet("", "delete table netdev "+n.name), n.nftQuiet(n.name, "delete table netdev "+n.name))
}

// nft runs an nft command in the namespace named ns, or in the test's
// when ns is empty.
func (n *Namespace) nft(ns, rule string) error {
	cmd := exec.Command("nft", rule)
	if ns != "" {
		cmd = exec.Command("ip", "netns", "exec", ns, "nft", rule)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("privatedb: nft %s: %v: %s", rule, err, out)
	}
	return nil
}

// nftQuiet is nft for the removal of a table that may not exist.
func (n *Namespace) nftQuiet(ns, rule string) error {
	err := n.nft(ns, rule)
	if err != nil && strings.Contains(err.Error(), "No such file or directory") {
		return nil
	}
	return err
}

// Reach routes addr, an address of the test's side that is not on this
// pair (another namespace's HostAddr, where a server listens), through
// the pair, so that several namespaces reach one server and each can be
// cut off from it alone.
func (n *Namespace) Reach(addr string) error {
	if out, err := exec.Command("ip", "-n", n.name, "route", "add", addr+"/32", "via", n.HostAddr).CombinedOutput(); err != nil {
		return fmt.Errorf("privatedb: route %s from %s: %v: %s", addr, n.name, err, out)
	}
	return nil
}
