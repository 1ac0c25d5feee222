#!/usr/bin/perl
# The spawner (see spawner.ts); its line protocol is spawner-protocol.ts.
# No module at all (not strict or warnings, nor the XS halves of POSIX and Fcntl): loading them
# took longer than perl takes to start, and a server's first start waits for this script to be up;
# and a module is looked up along @INC, whose first places (/etc/perl, /usr/local/...) a policy
# may let a confined child write: the unconfined spawner would then run the child's code. So
# Linux's numbers stand in for their constants (EINTR 4, WNOHANG 1, the same on every
# architecture), and setsid(2) and execve(2) are syscalls whose numbers the server passes as the
# arguments (0: POSIX, loaded now, for setsid; perl's exec for execve: only on an architecture
# whose numbers spawner.ts does not know).
my $SETSID = shift // 0;
my $EXECVE = shift // 0;
require POSIX if !$SETSID;
my ($EINTR, $WNOHANG) = (4, 1);
opendir(my $dir, '/proc/self/fd') or die "no /proc: $!\n";
my @inherited = grep { /^\d+$/ && $_ > 2 && $_ != fileno($dir) } readdir $dir;
closedir $dir;
# A handle opened on each descriptor closes it.
for my $fd (@inherited) { my $h; (open($h, '<&=', $fd) || open($h, '>&=', $fd)) && close($h) }
# SIGCHLD wakes select() through this pipe: one byte per signal, drained whenever select() says
# so (a blocking read then returns what is there), far below what would fill it.
pipe(my $wake_r, my $wake_w) or die "pipe: $!\n";
$SIG{CHLD} = sub { syswrite $wake_w, 'x' };
my %held;
my %running;
my $REAP_POLL = 0.02;

sub say_line {
  my ($line) = @_;
  while (length $line) {
    my $n = syswrite STDOUT, $line;
    if (!defined $n) { next if $! == $EINTR; exit 0 }
    substr($line, 0, $n) = '';
  }
}

# In a child: whether it now leads a session of its own.
sub new_session {
  $! = 0;
  my $sid = $SETSID ? syscall($SETSID) : POSIX::setsid();
  return defined $sid && $sid == $$;
}

# In a child: runs $file with @$argv and exactly the environment %$env (sorted), or returns with $!
# set. execve(2) takes the environment as one array; setting %ENV instead costs a scan of environ
# per variable (glibc's setenv), quadratic in their number. And execve reports a file it cannot
# run (ENOEXEC) as the reference does, where perl's exec (execvp) would run it with /bin/sh.
sub run_program {
  my ($file, $argv, $env) = @_;
  if ($EXECVE) {
    my @environ = map { "$_=$env->{$_}" } sort keys %$env;
    syscall($EXECVE, $file, pack('p*', @$argv, undef), pack('p*', @environ, undef));
    return;
  }
  %ENV = ();
  $ENV{$_} = $env->{$_} for sort keys %$env;
  exec { $file } @$argv;
}

# In a child that cannot run its program: the parent gets the errno, and the child dies without
# exit handlers or buffers flushed twice.
sub child_failed {
  my ($status) = @_;
  syswrite $status, pack('N', ($! + 0) || 22); # EINVAL when setsid was not what it seemed
  kill 'KILL', $$;
}

sub failed {
  my ($id, $errno) = @_;
  say_line("F $id $errno\n");
}

sub reap {
  while ((my $pid = waitpid(-1, $WNOHANG)) > 0) { delete $running{$pid}; say_line("X $pid $?\n") }
}

sub make_pipes {
  my ($batch, $count) = @_;
  my @fds;
  for my $i (0 .. $count - 1) {
    pipe(my $r, my $w) or last;
    $held{"$batch.$i"} = [$r, $w];
    push @fds, fileno($r), fileno($w);
  }
  say_line(join(' ', 'P', $batch, @fds) . "\n");
}

sub spawn_one {
  my @f = split /\0/, $_[0], -1;
  my ($id, $file, $cwd, $piped, $argc) = splice @f, 0, 5;
  my @argv = splice @f, 0, $argc;
  my $envc = shift @f;
  my %env = splice @f, 0, 2 * $envc;
  my ($in_r, $in_w, $out_r, $out_w, $err_r, $err_w, $st_r, $st_w);
  if ($piped) { pipe($in_r, $in_w) or return failed($id, $! + 0) }
  pipe($out_r, $out_w) && pipe($err_r, $err_w) && pipe($st_r, $st_w) or return failed($id, $! + 0);
  my $pid = fork;
  return failed($id, $! + 0) if !defined $pid;
  if ($pid == 0) {
    $SIG{CHLD} = 'DEFAULT';
    # The spawner's ends go first: reopening a standard handle takes a free descriptor (perl
    # dups, then dup2s onto 0, 1 or 2), and at the descriptor limit these are the ones to free.
    close $st_r; close $out_r; close $err_r; close $in_w if $piped;
    new_session() or child_failed($st_w);
    ($piped ? open(STDIN, '<&', $in_r) : open(STDIN, '<', '/dev/null'))
      && open(STDOUT, '>&', $out_w) && open(STDERR, '>&', $err_w) or child_failed($st_w);
    run_program($file, \@argv, \%env) if chdir $cwd;
    child_failed($st_w);
  }
  close $st_w; close $out_w; close $err_w; close $in_r if $piped;
  my ($status, $n) = ('');
  do { $n = sysread $st_r, $status, 4 } while (!defined $n && $! == $EINTR);
  close $st_r;
  if ($n) {
    waitpid($pid, 0);
    return failed($id, unpack('N', $status));
  }
  $held{$id} = [$out_r, $err_r, $piped ? $in_w : ()];
  $running{$pid} = 1;
  say_line("S $id $pid " . ($piped ? fileno $in_w : '-') . ' ' . fileno($out_r) . ' ' . fileno($err_r) . "\n");
}

my $buffer = '';
my $watched = '';
vec($watched, 0, 1) = 1;
vec($watched, fileno $wake_r, 1) = 1;
for (;;) {
  # Perl runs signal handlers between statements, so a SIGCHLD that lands
  # just before select() blocks is only handled after it returns: while
  # children run, select() never sleeps longer than $REAP_POLL.
  my $ready = select(my $readable = $watched, undef, undef, %running ? $REAP_POLL : undef);
  if ($ready > 0 && vec($readable, fileno $wake_r, 1)) { sysread $wake_r, my $drained, 4096 }
  reap();
  next unless $ready > 0 && vec($readable, 0, 1);
  my $n = sysread STDIN, $buffer, 65536, length $buffer;
  if (!defined $n) { next if $! == $EINTR; last }
  last if $n == 0;
  for (;;) {
    if ($buffer =~ /\AR (\S+)\n/) { delete $held{$1}; substr($buffer, 0, $+[0]) = ''; next }
    if ($buffer =~ /\AP (\S+) (\d+)\n/) { make_pipes($1, $2); substr($buffer, 0, $+[0]) = ''; next }
    last unless $buffer =~ /\A(\d+)\n/;
    my ($length, $start) = ($1, $+[0]);
    last if length($buffer) < $start + $length;
    my $payload = substr($buffer, $start, $length);
    substr($buffer, 0, $start + $length) = '';
    spawn_one($payload);
  }
}
