/**
 * The network filter of a sandbox whose policy restricts the network. The
 * child's own network namespace already leaves it no route out; this seccomp
 * filter also keeps it from the host's Unix sockets (docker.sock, an
 * ssh-agent), which a namespace does not cover. It is Codex's filter: these
 * calls fail with EPERM — connect, bind, listen, accept, send and receive of
 * several messages, shutdown, socket options and names, ptrace and io_uring
 * — and `socket`/`socketpair` for any family but AF_UNIX (a pair of local
 * stream sockets still works). Beyond Codex's, an AF_UNIX socket must be a
 * stream or a seqpacket one: a datagram one (SOCK_DGRAM, or SOCK_RAW, which
 * the kernel makes a datagram one) could send to a host socket by its path
 * (/dev/log) with `sendmsg`, allowed for a pair's messages. A call from
 * another ABI (x32) fails too, and a foreign architecture's kills the process.
 *
 * perl installs it inside the sandbox, just before it runs the program
 * (`process/perl.ts`): the filter is `prctl:seccomp:program` with the two
 * syscall numbers and the program as hex.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const BPF_AND_K = 0x54;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO_EPERM = 0x00050000 | 1;
const RET_ALLOW = 0x7fff0000;
const AF_UNIX = 1;
/** Offsets in `struct seccomp_data`: the call's number, its ABI, and the low half of its first argument (little-endian). */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const FIRST_ARGUMENT_OFFSET = 16;
const SECOND_ARGUMENT_OFFSET = 24;
/** A socket's type without its flags (SOCK_NONBLOCK, SOCK_CLOEXEC). */
const SOCKET_TYPE_MASK = 0xf;
/** The connection-oriented types: with connect denied, such a socket can reach nothing but its pair. */
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** Set in the call numbers of x86-64's x32 ABI. */
const X32_BIT = 0x40000000;

interface ArchTable {
  auditArch: number;
  prctl: number;
  seccomp: number;
  /** Denied whatever their arguments. */
  denied: Record<string, number>;
  /** Denied unless the family is AF_UNIX. */
  socketFamilies: Record<string, number>;
  hasX32: boolean;
}

/** Numbers from the kernel's tables (x86-64: asm/unistd_64.h; arm64: asm-generic/unistd.h), checked by the unit test where the headers are installed. */
export const ARCH_TABLES: Record<string, ArchTable> = {
  x64: {
    auditArch: 0xc000003e,
    prctl: 157,
    seccomp: 317,
    denied: {
      connect: 42,
      accept: 43,
      sendto: 44,
      shutdown: 48,
      bind: 49,
      listen: 50,
      getsockname: 51,
      getpeername: 52,
      setsockopt: 54,
      getsockopt: 55,
      ptrace: 101,
      accept4: 288,
      recvmmsg: 299,
      sendmmsg: 307,
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
    },
    socketFamilies: { socket: 41, socketpair: 53 },
    hasX32: true,
  },
  arm64: {
    auditArch: 0xc00000b7,
    prctl: 167,
    seccomp: 277,
    denied: {
      bind: 200,
      listen: 201,
      accept: 202,
      connect: 203,
      getsockname: 204,
      getpeername: 205,
      sendto: 206,
      setsockopt: 208,
      getsockopt: 209,
      shutdown: 210,
      ptrace: 117,
      accept4: 242,
      recvmmsg: 243,
      sendmmsg: 269,
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
    },
    socketFamilies: { socket: 198, socketpair: 199 },
    hasX32: false,
  },
};

type Target = 'known-arch' | 'deny' | 'family' | 'allow';
type Instruction = { code: number; k: number; jt?: Target; jf?: Target } | { label: Target };

/** The filter for `arch` (default: this machine's) in perl's form, or undefined where none is known. */
export function networkFilter(arch: string = process.arch): string | undefined {
  const table = ARCH_TABLES[arch];
  if (!table) return undefined;
  return `${table.prctl}:${table.seccomp}:${assemble(program(table)).toString('hex')}`;
}

function program(table: ArchTable): Instruction[] {
  return [
    { code: BPF_LD_W_ABS, k: ARCH_OFFSET },
    { code: BPF_JEQ_K, k: table.auditArch, jt: 'known-arch' },
    { code: BPF_RET_K, k: RET_KILL_PROCESS },
    { label: 'known-arch' },
    { code: BPF_LD_W_ABS, k: NR_OFFSET },
    ...(table.hasX32 ? [{ code: BPF_JGE_K, k: X32_BIT, jt: 'deny' as const }] : []),
    ...Object.values(table.denied).map((nr) => ({ code: BPF_JEQ_K, k: nr, jt: 'deny' as const })),
    ...Object.values(table.socketFamilies).map((nr) => ({ code: BPF_JEQ_K, k: nr, jt: 'family' as const })),
    { code: BPF_RET_K, k: RET_ALLOW },
    { label: 'family' },
    { code: BPF_LD_W_ABS, k: FIRST_ARGUMENT_OFFSET },
    { code: BPF_JEQ_K, k: AF_UNIX, jf: 'deny' },
    { code: BPF_LD_W_ABS, k: SECOND_ARGUMENT_OFFSET },
    { code: BPF_AND_K, k: SOCKET_TYPE_MASK },
    { code: BPF_JEQ_K, k: SOCK_STREAM, jt: 'allow' },
    { code: BPF_JEQ_K, k: SOCK_SEQPACKET, jt: 'allow' },
    { code: BPF_RET_K, k: RET_ERRNO_EPERM },
    { label: 'allow' },
    { code: BPF_RET_K, k: RET_ALLOW },
    { label: 'deny' },
    { code: BPF_RET_K, k: RET_ERRNO_EPERM },
  ];
}

/** Lays out `instructions` as `struct sock_filter`s, jumps resolved to their labels (no target: the next instruction). */
function assemble(instructions: Instruction[]): Buffer {
  const labels = new Map<Target, number>();
  const real: Array<Exclude<Instruction, { label: Target }>> = [];
  for (const instruction of instructions) {
    if ('label' in instruction) labels.set(instruction.label, real.length);
    else real.push(instruction);
  }
  const bytes = Buffer.alloc(real.length * 8);
  real.forEach((instruction, index) => {
    const offset = (target: Target | undefined) => (target === undefined ? 0 : labels.get(target)! - index - 1);
    bytes.writeUInt16LE(instruction.code, index * 8);
    bytes.writeUInt8(offset(instruction.jt), index * 8 + 2);
    bytes.writeUInt8(offset(instruction.jf), index * 8 + 3);
    bytes.writeUInt32LE(instruction.k >>> 0, index * 8 + 4);
  });
  return bytes;
}
