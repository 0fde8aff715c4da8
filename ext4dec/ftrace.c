// SPDX-License-Identifier: GPL-2.0
/*
 * Redirection of kernel functions to ext4dec's wrappers with ftrace.
 *
 * Each hooked function's fentry call is traced by an ftrace_ops with
 * IPMODIFY (the mechanism livepatch uses): the callback changes the saved
 * instruction pointer so that the function returns into our wrapper
 * instead of running.  The module calls the original through its address
 * (ext4.c); a call from module text is recognised by the callback and let
 * through.  Wrappers run in the context of the original function,
 * sleepable where it is.  Nothing here knows which functions are hooked
 * (hooks.c).
 *
 * A hook may let calls through by their arguments (@want): those run the
 * function as if it were not hooked, and unload never waits for them.
 *
 * Unloading: after the ops are unregistered, synchronize_rcu_tasks() waits
 * until no task can still be between the trampoline and a wrapper's first
 * instruction, and synchronize_srcu() until no task is inside a wrapper
 * (ext4dec_hook_enter/exit).
 */
#include "ext4dec.h"

#include <linux/module.h>
#include <linux/sched.h>
#include <linux/srcu.h>

/*
 * Wrappers in progress, for unload to wait for: an SRCU read section
 * each, so that the hooks of hot paths (every ext4 read) touch only this
 * CPU's counters, no shared cache line.
 */
static struct srcu_struct ext4dec_hook_srcu;

/**
 * ext4dec_hook_enter() - a wrapper starts running
 *
 * Every wrapper calls this first and ext4dec_hook_exit() last, so that
 * module unload can wait for wrappers in progress.
 *
 * Return: what ext4dec_hook_exit() takes.
 */
int ext4dec_hook_enter(void)
	__acquires(ext4dec_hooks)
{
	return srcu_read_lock(&ext4dec_hook_srcu);
}

/**
 * ext4dec_hook_exit() - a wrapper is done
 * @idx: from ext4dec_hook_enter()
 */
void ext4dec_hook_exit(int idx)
	__releases(ext4dec_hooks)
{
	srcu_read_unlock(&ext4dec_hook_srcu, idx);
}

static void notrace ext4dec_ftrace_thunk(unsigned long ip, unsigned long parent_ip,
					 struct ftrace_ops *ops,
					 struct ftrace_regs *fregs)
{
	struct ext4dec_hook *hook = container_of(ops, struct ext4dec_hook, ops);

	/* calls from module text (ext4.c) reach the original */
	if (within_module(parent_ip, THIS_MODULE))
		return;
	/* and so do the calls the wrapper has nothing to do with */
	if (hook->want && !hook->want(fregs))
		return;
	ext4dec_ftrace_set_ip(fregs, (unsigned long)hook->wrapper);
}

/*
 * The redirection changes the instruction pointer in the ftrace_regs
 * that ftrace passes where it passes the arguments (x86_64 does): no need
 * to save all the registers then, as livepatch does not.  Elsewhere the
 * kernel's ftrace_regs_set_instruction_pointer() does nothing, and the
 * hooks would let every call through.
 */
#ifndef CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS
#error "ext4dec needs CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS to redirect calls"
#endif

static int ext4dec_hook_install(struct ext4dec_hook *hook)
{
	int err;

	hook->ops.func = ext4dec_ftrace_thunk;
	/*
	 * Permanent: sysctl kernel.ftrace_enabled=0 fails with EBUSY while
	 * the hooks are in, instead of silently bypassing them while inodes
	 * are active (evictions, chattr and the data ioctls would reach
	 * ext4 unchecked).  The callback calls nothing that is traced: it
	 * needs no recursion guard from ftrace (FTRACE_OPS_FL_RECURSION).
	 */
	hook->ops.flags = FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_PERMANENT;
	err = ftrace_set_filter_ip(&hook->ops, hook->address, 0, 0);
	if (err) {
		pr_err("hook %s: not traceable (ftrace_set_filter_ip: %pe)\n",
		       hook->name, ERR_PTR(err));
		return err;
	}
	err = register_ftrace_function(&hook->ops);
	if (err) {
		pr_err("hook %s: %s (register_ftrace_function: %pe)\n",
		       hook->name, err == -EBUSY ?
		       "redirected already (a livepatch, another module) or ftrace off" :
		       "not traceable", ERR_PTR(err));
		ftrace_set_filter_ip(&hook->ops, hook->address, 1, 0);
		return err;
	}
	return 0;
}

static int ext4dec_hook_remove(struct ext4dec_hook *hook)
{
	int err = unregister_ftrace_function(&hook->ops);

	if (err) {
		pr_crit("unhooking %s: unregister_ftrace_function: %pe\n",
			hook->name, ERR_PTR(err));
		return err;
	}
	ftrace_set_filter_ip(&hook->ops, hook->address, 1, 0);
	return 0;
}

/*
 * A hook that cannot be removed (ftrace gave up after a failure of its
 * own: it then leaves every patched call site as it is) still sends calls
 * to this module: its code must never be freed.  Module unload cannot be
 * refused once the module's exit runs, so it stops here for good, the
 * module kept in memory, instead of returning to free it.
 */
static void __noreturn ext4dec_hooks_stuck(void)
{
	pr_crit("hooks still in place: the module stays in memory, and this rmmod never ends\n");
	for (;;) {
		set_current_state(TASK_IDLE);
		schedule();
	}
}

/**
 * ext4dec_hooks_install() - install a set of hooks, all or none
 * @hooks: array of hooks with @name, @wrapper and @address set
 * @count: number of hooks
 *
 * On failure the hooks installed so far are removed again and the log
 * names the function that could not be hooked.
 *
 * Return: 0 or a negative errno.
 */
int ext4dec_hooks_install(struct ext4dec_hook *hooks, size_t count)
{
	size_t i;
	int err;

	err = init_srcu_struct(&ext4dec_hook_srcu);
	if (err)
		return err;
	for (i = 0; i < count; i++) {
		err = ext4dec_hook_install(&hooks[i]);
		if (err)
			goto out_remove;
	}
	return 0;
out_remove:
	ext4dec_hooks_remove(hooks, i);
	return err;
}

/**
 * ext4dec_hooks_remove() - remove hooks and wait until no wrapper runs
 * @hooks: hooks installed by ext4dec_hooks_install()
 * @count: number of hooks
 *
 * Does not return if a hook cannot be removed (ext4dec_hooks_stuck()).
 */
void ext4dec_hooks_remove(struct ext4dec_hook *hooks, size_t count)
{
	int err = 0;

	while (count--)
		err |= ext4dec_hook_remove(&hooks[count]);
	if (err)
		ext4dec_hooks_stuck();
	synchronize_rcu_tasks();
	synchronize_srcu(&ext4dec_hook_srcu);
	/* a task preempted right after ext4dec_hook_exit() is still here */
	synchronize_rcu_tasks();
	cleanup_srcu_struct(&ext4dec_hook_srcu);
}
