package main

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A workload's pod template, as Services and selectors see it.
type workload struct {
	key    string
	labels labels.Set
	ports  map[string]int32
}

type problems map[string][]string

func (p problems) add(key, format string, a ...interface{}) {
	p[key] = append(p[key], fmt.Sprintf(format, a...))
}

func check(objs []object) problems {
	p := problems{}
	var loads []workload
	services := map[string]*corev1.Service{}
	for _, o := range objs {
		key := o.kind + "/" + o.name
		if _, dup := p[key]; dup {
			p.add(key, "twice in one rendering")
		} else {
			p[key] = nil
		}
		checkMeta(p, key, o.obj)
		switch v := o.obj.(type) {
		case *appsv1.StatefulSet:
			loads = append(loads, checkPod(p, key, v.Spec.Selector,
				&v.Spec.Template, claimNames(v)))
		case *appsv1.Deployment:
			loads = append(loads, checkPod(p, key, v.Spec.Selector,
				&v.Spec.Template, nil))
		case *corev1.Service:
			services[v.Name] = v
		}
	}
	for _, o := range objs {
		key := o.kind + "/" + o.name
		switch v := o.obj.(type) {
		case *appsv1.StatefulSet:
			s := services[v.Spec.ServiceName]
			if s == nil || s.Spec.ClusterIP != corev1.ClusterIPNone {
				p.add(key, "serviceName %q is no headless Service",
					v.Spec.ServiceName)
			}
		case *corev1.Service:
			checkService(p, key, v, loads)
		case *policyv1.PodDisruptionBudget:
			selects(p, key, v.Spec.Selector, loads)
		case *networkingv1.NetworkPolicy:
			if w := selects(p, key, &v.Spec.PodSelector, loads); w != nil {
				checkPolicyPorts(p, key, v, w)
			}
		case *ServiceMonitor:
			checkMonitor(p, key, v, services)
		}
	}
	return p
}

func checkMeta(p problems, key string, obj interface{}) {
	m, ok := obj.(metav1.Object)
	if !ok {
		m = &obj.(*ServiceMonitor).ObjectMeta
	}
	for _, e := range validation.IsDNS1123Subdomain(m.GetName()) {
		p.add(key, "name: %s", e)
	}
	if _, ns := obj.(*corev1.Namespace); !ns && m.GetNamespace() == "" {
		p.add(key, "no metadata.namespace")
	}
	checkLabels(p, key, m.GetLabels())
}

func checkLabels(p problems, key string, l map[string]string) {
	for k, v := range l {
		for _, e := range validation.IsQualifiedName(k) {
			p.add(key, "label %q: %s", k, e)
		}
		for _, e := range validation.IsValidLabelValue(v) {
			p.add(key, "label %s=%q: %s", k, v, e)
		}
	}
}

func claimNames(s *appsv1.StatefulSet) map[string]bool {
	n := map[string]bool{}
	for _, c := range s.Spec.VolumeClaimTemplates {
		n[c.Name] = true
	}
	return n
}

func checkPod(p problems, key string, sel *metav1.LabelSelector,
	t *corev1.PodTemplateSpec, claims map[string]bool) workload {
	w := workload{key: key, labels: t.Labels, ports: map[string]int32{}}
	checkLabels(p, key, t.Labels)
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || sel == nil || s.Empty() || !s.Matches(w.labels) {
		p.add(key, "selector %s does not select its pod template",
			metav1.FormatLabelSelector(sel))
	}
	vols := map[string]bool{}
	for name := range claims {
		vols[name] = true
	}
	for _, v := range t.Spec.Volumes {
		vols[v.Name] = true
		if v.Secret != nil && v.Secret.SecretName == "" {
			p.add(key, "volume %s: a Secret without secretName", v.Name)
		}
	}
	if len(t.Spec.Containers) == 0 {
		p.add(key, "no containers")
	}
	for _, c := range t.Spec.Containers {
		checkContainer(p, key, &c, vols, w.ports)
	}
	return w
}

func checkContainer(p problems, key string, c *corev1.Container,
	vols map[string]bool, ports map[string]int32) {
	for _, m := range c.VolumeMounts {
		if !vols[m.Name] {
			p.add(key, "%s mounts volume %q, which is not there",
				c.Name, m.Name)
		}
	}
	for _, port := range c.Ports {
		if port.ContainerPort < 1 || port.ContainerPort > 65535 {
			p.add(key, "%s: containerPort %d", c.Name, port.ContainerPort)
		}
		if port.Name != "" {
			ports[port.Name] = port.ContainerPort
		}
	}
	for what, pr := range map[string]*corev1.Probe{
		"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe} {
		if pr == nil || pr.HTTPGet == nil {
			p.add(key, "%s: %s is no httpGet", c.Name, what)
			continue
		}
		if !portIn(pr.HTTPGet.Port, ports) {
			p.add(key, "%s: %s port %s is not a container port",
				c.Name, what, pr.HTTPGet.Port.String())
		}
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil ||
		!*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil ||
		*sc.AllowPrivilegeEscalation {
		p.add(key, "%s: root filesystem not read-only, or privilege "+
			"escalation allowed", c.Name)
	}
	if c.Resources.Requests == nil || c.Resources.Limits == nil {
		p.add(key, "%s: no resource requests and limits", c.Name)
	}
}

func portIn(port intstr.IntOrString, ports map[string]int32) bool {
	if port.Type == intstr.String {
		_, ok := ports[port.StrVal]
		return ok
	}
	for _, n := range ports {
		if n == port.IntVal {
			return true
		}
	}
	return false
}

// selects reports a selector that selects none of the workloads.
func selects(p problems, key string, sel *metav1.LabelSelector,
	loads []workload) *workload {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err == nil && sel != nil && !s.Empty() {
		for i := range loads {
			if s.Matches(loads[i].labels) {
				return &loads[i]
			}
		}
	}
	p.add(key, "selector %s selects no pod template",
		metav1.FormatLabelSelector(sel))
	return nil
}

func checkService(p problems, key string, s *corev1.Service,
	loads []workload) {
	sel := &metav1.LabelSelector{MatchLabels: s.Spec.Selector}
	w := selects(p, key, sel, loads)
	if w == nil {
		return
	}
	for _, port := range s.Spec.Ports {
		if !portIn(port.TargetPort, w.ports) {
			p.add(key, "targetPort %s is not a port of %s",
				port.TargetPort.String(), w.key)
		}
	}
}

func checkPolicyPorts(p problems, key string, np *networkingv1.NetworkPolicy,
	w *workload) {
	for _, r := range np.Spec.Ingress {
		for _, port := range r.Ports {
			if port.Port != nil && !portIn(*port.Port, w.ports) {
				p.add(key, "ingress port %s is not a port of %s",
					port.Port.String(), w.key)
			}
		}
	}
}

func checkMonitor(p problems, key string, m *ServiceMonitor,
	services map[string]*corev1.Service) {
	s, err := metav1.LabelSelectorAsSelector(&m.Spec.Selector)
	if err != nil || s.Empty() {
		p.add(key, "no selector")
		return
	}
	for _, svc := range services {
		if !s.Matches(labels.Set(svc.Labels)) {
			continue
		}
		for _, e := range m.Spec.Endpoints {
			found := false
			for _, port := range svc.Spec.Ports {
				found = found || port.Name == e.Port
			}
			if !found {
				p.add(key, "endpoint port %q is not a port of Service/%s",
					e.Port, svc.Name)
			}
		}
		return
	}
	p.add(key, "selects no Service")
}
