// SPDX-License-Identifier: GPL-2.0
/*
 * ext4dec_ioctl32 - an ioctl as a 32-bit program makes it, through the
 * kernel's compat path (ext4_compat_ioctl()), for the selftests.
 *
 * Usage: ext4dec_ioctl32 FILE|fd:N CMD
 *
 * Opens FILE read-only, or takes the inherited descriptor N, and calls
 * ioctl(fd, CMD, NULL); CMD and N are numbers in C notation (0x... for
 * hex).  Exit status: 0 if the ioctl succeeded, else
 * its errno (or the open's); 125 on a usage error.  Freestanding: i386
 * system calls through int $0x80, so that it builds with no 32-bit C
 * library (gcc -m32 -nostdlib -static).
 */

#define SYS_EXIT	1
#define SYS_OPEN	5
#define SYS_IOCTL	54

static long syscall3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory");
	return ret;
}

static void __attribute__((noreturn)) leave(long status)
{
	for (;;)
		syscall3(SYS_EXIT, status, 0, 0);
}

/* A number in C notation; -1 if it is not one */
static long number(const char *s)
{
	unsigned long n = 0, base = 10, d;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		if (d >= base)
			return -1;
		n = n * base + d;
	}
	return (long)n;
}

/* @sp: the initial stack: argc, then the arguments */
void __attribute__((noreturn, used)) ioctl32_main(long *sp);
void ioctl32_main(long *sp)
{
	char **argv = (char **)(sp + 1);
	long fd, cmd, ret;

	if (sp[0] != 3)
		leave(125);
	cmd = number(argv[2]);
	if (cmd == -1)
		leave(125);
	if (argv[1][0] == 'f' && argv[1][1] == 'd' && argv[1][2] == ':') {
		fd = number(argv[1] + 3);
		if (fd == -1)
			leave(125);
	} else {
		fd = syscall3(SYS_OPEN, (long)argv[1], 0, 0);
		if (fd < 0)
			leave(-fd);
	}
	ret = syscall3(SYS_IOCTL, fd, cmd, 0);
	leave(ret < 0 ? -ret : 0);
}

__asm__(".globl _start\n"
	"_start:\n"
	"	movl %esp, %eax\n"
	"	andl $-16, %esp\n"
	"	subl $12, %esp\n"
	"	pushl %eax\n"
	"	call ioctl32_main\n");
