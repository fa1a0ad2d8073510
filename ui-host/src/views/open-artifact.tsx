// "Open" on an artifact the host lists (the Tasks page): opens it in an app entry that views its
// type (lime.ui artifact viewers; the user chooses when several apps do, remembered per type).

import type { JSX } from "preact";
import { useContext } from "preact/hooks";

import { HostContext } from "../context.js";

export function OpenArtifactButton(props: { ownerAppId: string; artifactId: string; artifactType: string }): JSX.Element {
  const host = useContext(HostContext);
  return (
    <button
      type="button"
      class="link-button"
      data-testid="open-artifact"
      aria-label={`Open the ${props.artifactType} artifact in its viewer`}
      onClick={() => host.openArtifact(props.ownerAppId, props.artifactId, props.artifactType)}
    >
      Open
    </button>
  );
}
