import type { Subjects } from '@hermes/contracts';

/**
 * The subject to send a contract's message on: the caller's, or the contract's own when it has no
 * parameters. A parameterised one (`{team}`, `{task_id}`) without a subject is a programming
 * error, thrown here rather than sent to a literal `{team}` that nobody answers for.
 */
export function contractSubject(contract: { name: string; subject: (s: Subjects) => string }, subjects: Subjects, given: string | undefined): string {
  if (given !== undefined) return given;
  const subject = contract.subject(subjects);
  if (subject.includes('{')) throw new Error(`${contract.name} is sent on a subject with parameters (${subject}): pass the subject`);
  return subject;
}
