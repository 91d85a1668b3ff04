import { actions, type FlagChangeBody, type Schemas } from '../../api/queries';
import { useAction } from '../../components/ui';

export type Feature = Schemas['featureSchema'];

export interface FlagContext {
  projectId: string;
  flagName: string;
  /** Environments whose changes need a change request, as the project is configured. */
  protectedEnvironments: string[];
  /** Tells the page a change went into a change request instead of being made. */
  onProposed: (environment: string, changeRequestId: number) => void;
}

/**
 * A change of the flag, made directly or, in an environment that requires change requests, added to the user's
 * draft change request there (the API refuses the direct change in such an environment).
 */
export function useFlagChange(context: FlagContext) {
  const path = { projectId: context.projectId, featureName: context.flagName };
  const mutation = useAction(actions.changeFlag, (proposal) => {
    if (proposal) context.onProposed(proposal.proposedIn, proposal.changeRequestId);
  });
  const mutate = (
    { environment, change, direct }: { environment: string | null; change: FlagChangeBody; direct: () => Promise<unknown> },
    options?: { onSuccess?: () => void },
  ) => mutation.mutate({ path, proposeIn: proposeIn(context, environment), change, direct }, options);
  return { mutate, error: mutation.error, isPending: mutation.isPending };
}

/** The environment a change must be proposed in instead of made: a protected one it touches (null: a whole-flag change). */
function proposeIn(context: FlagContext, environment: string | null): string | null {
  if (environment === null) return context.protectedEnvironments[0] ?? null;
  return context.protectedEnvironments.includes(environment) ? environment : null;
}
