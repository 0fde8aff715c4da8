// SPDX-License-Identifier: GPL-2.0
/*
 * hookblock: a test module that claims one kernel function for ftrace with
 * FTRACE_OPS_FL_IPMODIFY, as a livepatch of it would, and does nothing
 * with its calls.  While it is loaded, ext4dec cannot hook that function:
 * its load must fail with EBUSY, name the function and leave nothing
 * behind (tests/selftests/hookblock.sh).
 *
 *   insmod hookblock.ko target=ext4_file_open
 *
 * The callback never changes the instruction pointer, so it needs none
 * of the registers IPMODIFY lets it change: no SAVE_REGS, nothing that
 * differs between kernels.  @target is a function name, no pattern.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/string.h>

static char *target = "ext4_file_open";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "The function to claim (default ext4_file_open)");

static void notrace hookblock_func(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *ops,
				   struct ftrace_regs *fregs)
{
}

static struct ftrace_ops hookblock_ops = {
	.func = hookblock_func,
	.flags = FTRACE_OPS_FL_IPMODIFY,
};

static int __init hookblock_init(void)
{
	char name[KSYM_NAME_LEN];
	int err;

	/* one function: ftrace_set_filter() would also take globs and :mod */
	if (!target || !*target || strpbrk(target, "*?[]!:") ||
	    strscpy(name, target, sizeof(name)) < 0)
		return -EINVAL;
	err = ftrace_set_filter(&hookblock_ops, name, strlen(name), 1);
	if (err) {
		pr_err("%s: no such traceable function (%pe)\n", target,
		       ERR_PTR(err));
		return err;
	}
	err = register_ftrace_function(&hookblock_ops);
	if (err) {
		pr_err("%s: register_ftrace_function: %pe\n", target,
		       ERR_PTR(err));
		ftrace_set_filter(&hookblock_ops, NULL, 0, 1);
		return err;
	}
	pr_info("%s claimed with IPMODIFY\n", target);
	return 0;
}

static void __exit hookblock_exit(void)
{
	unregister_ftrace_function(&hookblock_ops);
	ftrace_set_filter(&hookblock_ops, NULL, 0, 1);
	pr_info("%s released\n", target);
}

module_init(hookblock_init);
module_exit(hookblock_exit);

MODULE_DESCRIPTION("Test only: claim a function with ftrace IPMODIFY");
MODULE_LICENSE("GPL");
