import type { Logger } from '../../core/index.ts';
import type { EventChannel } from '../../controller/index.ts';
import type { SecurityGroup } from '../../openstack/index.ts';
import { recordedGroups, type SecurityGroupRecord } from './translation/index.ts';

/** "The group verification found this group changed in Neutron behind Raven's back": its reconcile repairs it. */
export interface GroupDrifted {
  id: string;
}

export interface GroupVerificationOptions {
  record: SecurityGroupRecord;
  /** Where each group found changed is announced (the security group controller watches it). */
  drifted: EventChannel<GroupDrifted>;
  logger: Logger;
}

/**
 * The group verification as a check around the garbage collector's sweep, which lists this cluster's groups with
 * their rules anyway: the record's mark is taken before the sweep lists, then the record is replaced with what the
 * sweep saw (writes made since the mark win), and every group whose entry changed — deleted, or a rule deleted or
 * added by someone else — is sent on `drifted`. Its reconcile diffs against the corrected record, so a lost group is
 * made again once and a lost rule is made again; the metrics and the policies' `Translated` read the same record.
 * Without this, the record kept saying what Raven last wrote until the next leader loaded it.
 */
export function groupVerification(options: GroupVerificationOptions): {
  before(): (report: { securityGroups: readonly SecurityGroup[] }) => string[];
} {
  const { record } = options;
  return {
    before() {
      const mark = record.mark();
      return (report) => {
        // Not loaded yet: the loader's list (which also adopts untagged groups) comes first.
        if (!record.synced()) return [];
        const changed = record.replace(recordedGroups(report.securityGroups), mark);
        for (const id of changed) options.drifted.send({ id });
        if (changed.length > 0)
          options.logger.warn(
            { groups: changed.length, sample: changed.slice(0, 5) },
            "security groups changed in Neutron behind Raven's back: queued to repair them",
          );
        return changed.map((id) => `securitygroup/${id}`);
      };
    },
  };
}
