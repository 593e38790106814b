package upstream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// resolver looks a host name up; *net.Resolver is one, and a test gives
// its own to map a name to any address without real DNS.
type resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// dial connects to the service: it resolves the host itself, drops every
// address blockedKind names (unless allow_private), and dials the
// addresses left, in the resolver's order, by address: there is no second
// lookup. It dials only the base URL's host and port. The transport runs
// a dial apart from the request's context, so the dial is bounded by the
// service's timeout on its own.
func (s *Service) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	if !strings.EqualFold(addr, s.addr) {
		return nil, &Failure{Cause: CauseRedirect, Msg: fmt.Sprintf("%s: a connection to another origin was asked for and refused", s.addr)}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ips, err := s.resolve(ctx)
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(s.addr)
	p, _ := strconv.ParseUint(port, 10, 16)
	var last error
	for _, ip := range ips {
		conn, err := s.dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(ip, uint16(p)).String())
		if err == nil {
			return conn, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, s.timedOut("connecting")
	}
	return nil, &Failure{Cause: CauseConnect, Msg: fmt.Sprintf("cannot connect to %s (%s): %s", s.addr, ips[len(ips)-1], phrase(last))}
}

// dialTLS dials as dial does, then completes the TLS handshake with the
// service's roots and the configured host as server name, within the
// service's timeout. A handshake that fails is a Failure of cause "tls".
func (s *Service) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := s.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tc := tls.Client(conn, s.tls)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		if ctx.Err() != nil {
			return nil, s.timedOut("in the TLS handshake")
		}
		return nil, &Failure{Cause: CauseTLS, Msg: fmt.Sprintf("TLS with %s failed: %s", s.addr, tlsPhrase(err))}
	}
	return tc, nil
}

// resolve returns the addresses of the service's host that may be
// dialled: the host itself when it is an address, else what the resolver
// says, IPv4-mapped addresses unmapped; without allow_private, those
// blockedKind names are dropped; for an http base URL, every address but
// a loopback one (localhost resolved elsewhere: the credential would
// cross a network in the clear); none left is a Failure of cause
// "blocked_address".
func (s *Service) resolve(ctx context.Context) ([]netip.Addr, error) {
	addrs := []netip.Addr(nil)
	if a, err := netip.ParseAddr(s.host); err == nil {
		addrs = append(addrs, a)
	} else if addrs, err = s.lookup.LookupNetIP(ctx, "ip", s.host); err != nil {
		return nil, s.dnsFailure(ctx, err)
	}
	var ok []netip.Addr
	var refused netip.Addr
	why := ""
	for _, a := range addrs {
		a = a.Unmap()
		k := blockedKind(a)
		if s.base.Scheme == "http" && !a.IsLoopback() {
			k = "non-loopback" // plain http only on this machine, whatever a lookup of localhost said
		} else if s.cfg.AllowPrivate {
			k = ""
		}
		if k != "" {
			if why == "" {
				refused, why = a, k
			}
			continue
		}
		ok = append(ok, a)
	}
	switch {
	case len(ok) > 0:
		return ok, nil
	case why == "non-loopback":
		return nil, &Failure{Cause: CauseBlocked, Msg: fmt.Sprintf("%s resolves to %s, not a loopback address: refused (http goes only to this machine)", s.addr, refused)}
	case why != "":
		return nil, &Failure{Cause: CauseBlocked, Msg: fmt.Sprintf("%s resolves to %s, a %s address: refused (allow_private is off)", s.addr, refused, why)}
	}
	return nil, &Failure{Cause: CauseDNS, Msg: fmt.Sprintf("cannot resolve %s: no address", s.addr)}
}

// dnsFailure is the Failure of a lookup that failed with err.
func (s *Service) dnsFailure(ctx context.Context, err error) *Failure {
	var de *net.DNSError
	switch {
	case ctx.Err() != nil:
		return s.timedOut("resolving")
	case errors.As(err, &de) && de.IsNotFound:
		return &Failure{Cause: CauseDNS, Msg: fmt.Sprintf("cannot resolve %s: no such host", s.addr)}
	case errors.As(err, &de) && de.IsTimeout:
		return &Failure{Cause: CauseDNS, Msg: fmt.Sprintf("cannot resolve %s: the lookup timed out", s.addr)}
	}
	return &Failure{Cause: CauseDNS, Msg: fmt.Sprintf("cannot resolve %s: the lookup failed", s.addr)}
}

// blockedKind names the kind of a (unmapped) that no service reaches
// without allow_private, or returns "". Link-local covers 169.254.169.254,
// the cloud metadata address; private covers fc00::/7 and so
// fd00:ec2::254, the IPv6 one; CGNAT covers 100.100.100.200, another.
// Addresses that embed an IPv4 address (IPv4-compatible, NAT64, 6to4) are
// judged by it.
func blockedKind(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast():
		return "multicast"
	case a.Is4():
		return blocked4(a.As4())
	}
	return blocked6(a.As16())
}

// blocked4 names the kind of an IPv4 address blockedKind's own tests
// leave, or returns "".
func blocked4(b [4]byte) string {
	switch {
	case b[0] == 0:
		return "this-network"
	case b[0] == 100 && b[1]&0xc0 == 64:
		return "CGNAT"
	case b[0] == 192 && b[1] == 0 && b[2] == 0:
		return "IETF protocol"
	case b[0] == 198 && b[1]&0xfe == 18:
		return "benchmarking"
	case b[0] >= 240:
		return "reserved"
	}
	return ""
}

// blocked6 names the kind of an IPv6 address blockedKind's own tests
// leave, or returns "": site-local, and those that embed an IPv4 address,
// judged by it.
func blocked6(b [16]byte) string {
	switch {
	case b[0] == 0xfe && b[1]&0xc0 == 0xc0:
		return "site-local"
	case [12]byte(b[:12]) == [12]byte{}:
		return "IPv4-compatible"
	case [12]byte(b[:12]) == [12]byte{0, 0x64, 0xff, 0x9b}:
		return blockedKind(netip.AddrFrom4([4]byte(b[12:])))
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1:
		return "local NAT64"
	case b[0] == 0x20 && b[1] == 0x02:
		return blockedKind(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return ""
}

// loopbackName reports whether host names the loopback interface:
// localhost, or a loopback address.
func loopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
