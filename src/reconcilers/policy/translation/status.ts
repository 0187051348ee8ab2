import { EventChannel } from '../../../controller/index.ts';
import type { GroupChanged } from '../../network/index.ts';
import type { DesiredGroup } from './objects.ts';
import { ruleText } from './rules.ts';
import type { SecurityGroupRecord } from './record.ts';
import { groupId } from './groups.ts';

/**
 * How the security group reconciler last left each group: the failure a NetworkPolicy using it reports
 * (`TranslationFailed`), and the channel on which it says a group changed. In memory, like a controller's back-off:
 * after a restart every group is reconciled again and says anew.
 */
export class GroupStatus {
  readonly changed = new EventChannel<GroupChanged>('security-group-changed');
  readonly #errors = new Map<string, string>();

  fail(id: string, message: string): void {
    this.#errors.set(id, message);
    this.changed.send({ id, change: 'status' });
  }

  ok(id: string): void {
    if (this.#errors.delete(id)) this.changed.send({ id, change: 'status' });
  }

  error(id: string): string | undefined {
    return this.#errors.get(id);
  }
}

/**
 * The desired rules of a group as rule texts with their remote groups' Neutron ids, and the keys of remote groups
 * that do not exist yet (their rules wait for them).
 */
export function desiredRuleTexts(
  group: DesiredGroup,
  record: SecurityGroupRecord,
): { texts: Map<string, { rule: DesiredGroup['rules'][number]; remoteId: string | null }>; waiting: string[] } {
  const texts = new Map<string, { rule: DesiredGroup['rules'][number]; remoteId: string | null }>();
  const waiting: string[] = [];
  for (const rule of group.rules) {
    const remoteId = rule.remoteGroup ? (record.get(groupId(rule.remoteGroup))?.neutronId ?? null) : null;
    if (rule.remoteGroup && !remoteId) {
      waiting.push(rule.remoteGroup);
      continue;
    }
    texts.set(ruleText(rule, remoteId), { rule, remoteId });
  }
  return { texts, waiting };
}

/** Whether Neutron holds the group exactly as the translation wants it (by Raven's record of it). */
export function groupConverged(group: DesiredGroup, record: SecurityGroupRecord): boolean {
  const recorded = record.get(group.id);
  if (!recorded) return false;
  const { texts, waiting } = desiredRuleTexts(group, record);
  return (
    waiting.length === 0 && texts.size === recorded.rules.size && [...texts.keys()].every((t) => recorded.rules.has(t))
  );
}
