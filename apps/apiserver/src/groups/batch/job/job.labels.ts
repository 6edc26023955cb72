/** The labels the server puts on a Job's pod template to select its pods (pkg/apis/batch types.go). */

/** The Job's uid, the label its generated selector matches. */
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
/** The Job's name. */
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
/** The unprefixed form of CONTROLLER_UID_LABEL, still set for older clients. */
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
/** The unprefixed form of JOB_NAME_LABEL, still set for older clients. */
export const LEGACY_JOB_NAME_LABEL = 'job-name';
