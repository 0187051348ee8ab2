import { spawn, type ChildProcess } from 'node:child_process';

/**
 * The "container" in a dataplane pod: a tiny responder, so tests probe ports and not only ICMP. On every port given it
 * answers TCP with `<pod name>\n`, then echoes what the client sends (prefixed with the name) until the client closes
 * (a test holds a connection open across a change), and echoes UDP datagrams prefixed with the pod name, over IPv4
 * and IPv6.
 * Python from Debian (one small process per pod, far lighter than a Node.js per pod); started inside the pod's network
 * namespace, in its own process group so that it is stopped with everything it started.
 */
const script = `
import socket, sys, threading
name = sys.argv[1].encode()
def bound(kind, port):
    # One socket for both families where the namespace has IPv6 (dual-stack pods), else IPv4 only.
    try:
        s = socket.socket(socket.AF_INET6, kind)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        addr = ("::", port)
    except OSError:
        s = socket.socket(socket.AF_INET, kind)
        addr = ("0.0.0.0", port)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(addr)
    return s
def serve(c):
    # The name at once; then, while the client keeps the connection, each chunk echoed after the name (a test holds a
    # connection open across a policy change).
    try:
        c.sendall(name + b"\\n")
        while True:
            data = c.recv(2048)
            if not data: break
            c.sendall(name + b" " + data)
    except OSError:
        pass
    finally:
        c.close()
def tcp(port):
    s = bound(socket.SOCK_STREAM, port); s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
def udp(port):
    s = bound(socket.SOCK_DGRAM, port)
    while True:
        data, peer = s.recvfrom(2048)
        s.sendto(name + b" " + data, peer)
for p in sys.argv[2:]:
    proto, port = p.split("/")
    threading.Thread(target=tcp if proto == "TCP" else udp, args=(int(port),), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
`;

export interface ResponderPort {
  protocol: 'TCP' | 'UDP';
  port: number;
}

/** Starts the responder in `netns` (a name under /run/netns) and resolves once it listens. */
export function startResponder(netns: string, podName: string, ports: readonly ResponderPort[]): Promise<ChildProcess> {
  const args = ['netns', 'exec', netns, '/usr/bin/python3', '-c', script, podName];
  for (const p of ports) args.push(`${p.protocol}/${p.port}`);
  const child = spawn('ip', args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stderr = '';
    // Both pipes stay open and drained for the responder's life: closing one under Python makes its next write (even
    // the rest of "ready") fail with a broken pipe, and it exits.
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    child.stdout?.setEncoding('utf8').on('data', () => resolve(child));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`responder in ${netns} exited (${code}): ${stderr.trim()}`)));
  });
}

/** Stops a responder's whole process group. */
export function stopResponder(child: ChildProcess): void {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
