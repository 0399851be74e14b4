package benchtask

import (
	"math"
	"strconv"
)

// orbitParams fixes one sampled trajectory of the planar Kepler problem
// (GM = 1, semi-major axis 1, period 2π), integrated from pericentre with
// fixed-step classical Runge–Kutta (RK4), which conserves neither energy
// nor angular momentum exactly, so both errors are well above rounding.
type orbitParams struct {
	Eccentricity float64 // 0 ≤ e < 1
	Angle        float64 // orientation of the pericentre, radians
	Orbits       float64 // integrated time in periods
	Samples      int     // rows written, the first at t = 0
	Stride       int     // integration steps between two rows
}

// steps is the number of RK4 steps integrated.
func (p orbitParams) steps() int { return p.Stride * (p.Samples - 1) }

// state is (x, y, vx, vy).
type state [4]float64

// derivative is the right-hand side of the Kepler problem. Every product is
// rounded explicitly (float64 conversions) so that no platform fuses
// multiply–adds and the trajectory is the same bit for bit everywhere.
func derivative(s state) state {
	r2 := float64(s[0]*s[0]) + float64(s[1]*s[1])
	inv := 1 / float64(r2*math.Sqrt(r2))
	return state{s[2], s[3], -float64(s[0] * inv), -float64(s[1] * inv)}
}

// axpy is s + h·d, rounded per component.
func axpy(s state, h float64, d state) state {
	var out state
	for i := range s {
		out[i] = s[i] + float64(h*d[i])
	}
	return out
}

// rk4 advances s by one step h.
func rk4(s state, h float64) state {
	k1 := derivative(s)
	k2 := derivative(axpy(s, h/2, k1))
	k3 := derivative(axpy(s, h/2, k2))
	k4 := derivative(axpy(s, h, k3))
	var out state
	for i := range s {
		sum := k1[i] + float64(2*k2[i]) + float64(2*k3[i]) + k4[i]
		out[i] = s[i] + float64(h/6*sum)
	}
	return out
}

// pericentre is the initial state: at distance 1−e on the axis at Angle,
// moving perpendicular to it with the vis-viva speed.
func pericentre(p orbitParams) state {
	r := 1 - p.Eccentricity
	v := math.Sqrt((1 + p.Eccentricity) / r)
	c, s := math.Cos(p.Angle), math.Sin(p.Angle)
	return state{float64(r * c), float64(r * s), 0 - float64(v*s), float64(v * c)}
}

// orbitCSV integrates p and renders the samples as CSV (header
// t,x,y,vx,vy), each number in its shortest exact form, so a reader that
// parses it gets the very doubles written.
func orbitCSV(p orbitParams) []byte {
	h := p.Orbits * 2 * math.Pi / float64(p.steps())
	s := pericentre(p)
	buf := make([]byte, 0, p.Samples*100)
	buf = append(buf, "t,x,y,vx,vy\n"...)
	for row := 0; row < p.Samples; row++ {
		if row > 0 {
			for range p.Stride {
				s = rk4(s, h)
			}
		}
		buf = strconv.AppendFloat(buf, float64(float64(row*p.Stride)*h), 'g', -1, 64)
		for _, v := range s {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		}
		buf = append(buf, '\n')
	}
	return buf
}
