"""Drives Raven's embedded API server with Debian's python3-kubernetes and prints a JSON summary on stdout.

Usage: /usr/bin/python3 client_check.py KUBECONFIG NAMESPACE
(or the RAVEN_KUBECONFIG / RAVEN_NAMESPACE environment variables).

The summary is asserted on by test/e2e/python-client.test.ts, which also checks the server state itself.
Any exception ends the script with a non-zero exit and a traceback on stderr.
"""

import json
import os
import sys
import threading
import time

from kubernetes import client, config, watch


def main():
    kubeconfig = sys.argv[1] if len(sys.argv) > 1 else os.environ["RAVEN_KUBECONFIG"]
    namespace = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("RAVEN_NAMESPACE", "py-check")
    config.load_kube_config(config_file=kubeconfig)
    v1 = client.CoreV1Api()
    summary = {"kubernetes_version": client.VersionApi().get_code().git_version}

    summary["initial_namespaces"] = sorted(ns.metadata.name for ns in v1.list_namespace().items)

    created_ns = v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    summary["namespace"] = {"name": created_ns.metadata.name, "uid": created_ns.metadata.uid, "phase": created_ns.status.phase}

    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="py-pod", labels={"app": "py"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="main", image="busybox", command=["sleep", "3600"])]),
    )
    created_pod = v1.create_namespaced_pod(namespace, pod)
    summary["pod"] = {
        "name": created_pod.metadata.name,
        "uid": created_pod.metadata.uid,
        "resourceVersion": created_pod.metadata.resource_version,
        "phase": created_pod.status.phase if created_pod.status else None,
        "restartPolicy": created_pod.spec.restart_policy,
    }

    # Watch from the list's resourceVersion while another thread modifies the pod: only the later events arrive.
    pods = v1.list_namespaced_pod(namespace)
    rv = pods.metadata.resource_version
    summary["list_resource_version"] = rv
    summary["listed_pods"] = [p.metadata.name for p in pods.items]

    def modify():
        time.sleep(0.5)
        v1.patch_namespaced_pod("py-pod", namespace, {"metadata": {"annotations": {"watched": "yes"}}})
        v1.create_namespaced_pod(namespace, client.V1Pod(
            metadata=client.V1ObjectMeta(name="py-pod-2"),
            spec=client.V1PodSpec(containers=[client.V1Container(name="main", image="busybox")]),
        ))

    writer = threading.Thread(target=modify)
    writer.start()
    events = []
    w = watch.Watch()
    started = time.monotonic()
    for event in w.stream(v1.list_namespaced_pod, namespace, resource_version=rv, timeout_seconds=5):
        obj = event["object"]
        events.append({
            "type": event["type"],
            "name": obj.metadata.name,
            "resourceVersion": obj.metadata.resource_version,
            "annotations": obj.metadata.annotations or {},
        })
        if len(events) >= 2:
            w.stop()
    writer.join()
    summary["watch_events"] = events
    summary["watch_seconds"] = round(time.monotonic() - started, 2)

    # python's patch for a dict body is a strategic merge patch: containers merge by name (a merge patch would
    # replace the list and lose `command`).
    patched = v1.patch_namespaced_pod("py-pod", namespace, {
        "metadata": {"labels": {"tier": "backend", "app": None}},
        "spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]},
    })
    summary["patched_labels"] = patched.metadata.labels
    summary["patched_containers"] = [{"name": c.name, "image": c.image, "command": c.command} for c in patched.spec.containers]

    # A list body is sent as a JSON patch.
    patched = v1.patch_namespaced_pod("py-pod-2", namespace, [{"op": "add", "path": "/metadata/labels", "value": {"json": "patch"}}])
    summary["json_patched_labels"] = patched.metadata.labels

    # A watch from a resourceVersion older than the server's history ends in 410 Expired, raised as an ApiException.
    old_rv = v1.list_namespaced_pod(namespace).metadata.resource_version
    v1.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="bump")))
    v1.api_client.call_api("/_raven/faults/compact", "POST", auth_settings=["BearerToken"], response_type="object",
                           _return_http_data_only=True)
    try:
        expired = [e["type"] for e in watch.Watch().stream(v1.list_namespaced_pod, namespace, resource_version=old_rv, timeout_seconds=5)]
        summary["expired_watch"] = {"events": expired}
    except client.exceptions.ApiException as e:
        summary["expired_watch"] = {"status": e.status, "reason": e.reason}

    # Delete with a DeleteOptions body.
    deleted = v1.delete_namespaced_pod("py-pod-2", namespace, body=client.V1DeleteOptions(grace_period_seconds=0, propagation_policy="Background"))
    summary["deleted"] = {"kind": deleted.kind, "name": deleted.metadata.name}

    # A failure comes back as an ApiException carrying the Status.
    try:
        v1.read_namespaced_pod("no-such-pod", namespace)
        summary["missing_pod"] = None
    except client.exceptions.ApiException as e:
        body = json.loads(e.body)
        summary["missing_pod"] = {"status": e.status, "reason": body.get("reason"), "kind": body.get("kind")}

    print(json.dumps(summary))


if __name__ == "__main__":
    main()
