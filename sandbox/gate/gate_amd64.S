/*
 * The start gate of the persistent runner (sandbox/gate.go), linux/amd64.
 *
 * The runner starts it ahead of a run, in a new session, with /dev/null on
 * fds 0-2 and its end of a private socket pair on fd 3. It waits there for
 * one request (layout in gate.go), then, before any of the experiment's
 * code exists in the process: sets its own limits with prlimit64, changes
 * to the run's working folder, opens the run's two logs onto fds 1 and 2,
 * and executes the experiment's program. fd 3 is close-on-exec, so the
 * runner reads EOF once the exec succeeded; a failed step writes 8 bytes
 * to it instead (step in the low half, errno in the high) and exits 127.
 *
 * Position-independent, no data: the request is read onto the stack.
 * Assembled by gate_test.go (GNU as) and compared with gateCode.
 */
	.set BUFSZ, 65536
	.text
	.globl _start
_start:
	mov	$72, %eax		/* fcntl(3, F_SETFD, FD_CLOEXEC) */
	mov	$3, %edi
	mov	$2, %esi
	mov	$1, %edx
	syscall
	sub	$BUFSZ, %rsp
	mov	%rsp, %r12		/* r12: the request */
	xor	%r13d, %r13d		/* r13: bytes read */
	mov	$1, %ebp		/* ebp: the step, for a failure */
read:
	mov	$BUFSZ, %edx
	sub	%r13, %rdx
	jz	fail
	xor	%eax, %eax		/* read(3, r12+r13, BUFSZ-r13) */
	mov	$3, %edi
	lea	(%r12,%r13), %rsi
	syscall
	test	%rax, %rax
	jle	fail			/* EOF (errno 0) or an error */
	add	%rax, %r13
	cmp	$8, %r13
	jb	read
	cmp	(%r12), %r13		/* word 0: the request's length */
	jb	read
	mov	$2, %ebp
	mov	8(%r12), %rbx		/* word 1: how many limits */
	lea	16(%r12), %r14		/* then {resource, soft, hard} each */
limit:
	test	%rbx, %rbx
	jz	chdir
	mov	$302, %eax		/* prlimit64(0, resource, &{soft, hard}, NULL) */
	xor	%edi, %edi
	mov	(%r14), %rsi
	lea	8(%r14), %rdx
	xor	%r10d, %r10d
	syscall
	test	%rax, %rax
	jnz	fail
	add	$24, %r14
	dec	%rbx
	jmp	limit
chdir:					/* r14: offsets of dir, stdout, stderr, path; argc */
	mov	$3, %ebp
	mov	$80, %eax		/* chdir(dir) */
	mov	(%r14), %rdi
	add	%r12, %rdi
	syscall
	test	%rax, %rax
	jnz	fail
	mov	$1, %r15d		/* r15: the fd, 1 then 2 */
log:
	lea	3(%r15), %ebp		/* step 4: stdout, 5: stderr */
	mov	$2, %eax		/* open(log, O_WRONLY|O_CREAT|O_TRUNC|O_NOFOLLOW, 0644) */
	mov	(%r14,%r15,8), %rdi
	add	%r12, %rdi
	mov	$0x20241, %esi
	mov	$0644, %edx
	syscall
	test	%rax, %rax
	js	fail
	mov	%rax, %rbx
	mov	$33, %eax		/* dup2(fd, r15) */
	mov	%rbx, %rdi
	mov	%r15, %rsi
	syscall
	test	%rax, %rax
	js	fail
	mov	$3, %eax		/* close(fd) */
	mov	%rbx, %rdi
	syscall
	inc	%r15
	cmp	$3, %r15
	jb	log
	mov	$6, %ebp
	mov	32(%r14), %rcx		/* argc, then argc offsets and a 0 */
	lea	40(%r14), %rsi		/* rsi: argv */
	mov	%rsi, %r8
args:
	test	%rcx, %rcx
	jz	envs
	add	%r12, (%r8)
	add	$8, %r8
	dec	%rcx
	jmp	args
envs:
	mov	8(%r8), %rcx		/* after argv's 0: envc, then envc offsets and a 0 */
	lea	16(%r8), %rdx		/* rdx: envp */
	mov	%rdx, %r9
env:
	test	%rcx, %rcx
	jz	exec
	add	%r12, (%r9)
	add	$8, %r9
	dec	%rcx
	jmp	env
exec:
	mov	24(%r14), %rdi		/* execve(path, argv, envp) */
	add	%r12, %rdi
	mov	$59, %eax
	syscall
fail:
	neg	%eax			/* the errno, or 0 */
	shl	$32, %rax
	or	%rbp, %rax
	push	%rax
	mov	$1, %eax		/* write(3, &{step, errno}, 8) */
	mov	$3, %edi
	mov	%rsp, %rsi
	mov	$8, %edx
	syscall
	mov	$127, %edi		/* exit_group(127) */
	mov	$231, %eax
	syscall
